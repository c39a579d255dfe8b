import { signWebhook, type TransactionalStore } from '@service-pay/core';
import {
  samplePaymentPaidEvent,
  storeHandler,
  type TransactionalWrites,
  transactionalStoreConformance,
} from '@service-pay/core/testing';
import {
  creditOnce,
  deadlockTables,
  deadlockWithDelivery,
  deliveryRoundTrips,
  startRoundTripProxy,
} from '@service-pay/sql/testing';
import knexFactory, { type Knex } from 'knex';
import type { Pool } from 'mysql2/promise';
import { DataSource, type EntityManager } from 'typeorm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KnexStore } from '../src/knex.js';
import { TypeOrmStore } from '../src/typeorm.js';
import { DATABASE_URL, openPool, uniqueName } from './support/database.js';

// Knex and TypeORM on MariaDB: the same client files as on PostgreSQL, bound to the MySQL dialect. The
// transactional conformance suite, the round trips counted by the server, and the natural mistake (the
// client's own transaction inside the handler) refused.
let pool: Pool;
const marks = uniqueName('kt_marks');
const inboxes: string[] = [];
beforeAll(async () => {
  pool = await openPool();
  await pool.query(`create table ${marks} (id bigint auto_increment primary key, marker varchar(255) not null)`);
});
afterAll(async () => {
  await pool.query(`drop table if exists ${[marks, ...inboxes.flatMap((i) => [i, `${i}_keys`])].join(', ')}`);
  await pool.end();
});

const count = async (marker: string) => {
  const [rows] = await pool.query(`select count(*) as n from ${marks} where marker = ?`, [marker]);
  return Number((rows as Array<{ n: unknown }>)[0]?.n);
};

function inbox(): string {
  const name = uniqueName('kt_inbox');
  inboxes.push(name);
  return name;
}

/** Inside a delivery of `store`, `own` (the client's own transaction) is refused, naming ctx.tx. */
async function expectOwnTransactionRefused(store: TransactionalStore<unknown>, own: () => Promise<unknown>) {
  const claim = await store.begin(`own:${Math.random()}`, 'fp');
  if (claim.state !== 'claimed' || claim.session.scope === undefined) throw new Error('expected a claim');
  await expect(claim.session.scope.run(own)).rejects.toThrow(/ctx\.tx/);
  await claim.session.rollback(new Error('done'));
}

/**
 * A deadlock the handler catches (the server rolled the delivery's transaction back): the write the handler
 * sends after it is refused, the delivery answered 500 with nothing credited, and the retry credits once.
 */
async function expectCaughtDeadlockFails<Tx>(
  store: TransactionalStore<Tx>,
  writes: TransactionalWrites<Tx>,
  statement: (tx: Tx, text: string) => PromiseLike<unknown>,
) {
  const rows = uniqueName('kt_deadlock');
  const tables = deadlockTables(rows);
  for (const text of tables.create) await pool.query(text);
  const otherPool = await openPool({ connectionLimit: 1 }); // the store's own pool refuses a transaction
  const other = await otherPool.getConnection();
  try {
    const event = samplePaymentPaidEvent();
    const secret = 'whsec_kt_deadlock_0123456789abcdef';
    const delivery = (attempt: number) => {
      const { body, headers } = signWebhook({ event, secret, deliveryId: `dl_kt_${event.paymentId}_${attempt}` });
      return { method: 'POST', headers, rawBody: body };
    };
    let attempt = 0;
    let after: unknown = 'not tried';
    const handle = storeHandler<Tx>(
      { store, secret, logger: { warn: () => {}, error: () => {} } },
      async (paid, tx) => {
        attempt += 1;
        await writes.write(tx, paid.paymentId);
        if (attempt > 1) return;
        const deadlocked = await deadlockWithDelivery((text) => statement(tx, text), other, rows);
        expect(String((deadlocked as Error)?.message)).toMatch(/deadlock/i);
        after = await Promise.resolve()
          .then(() => writes.write(tx, `after:${paid.paymentId}`))
          .then(
            () => 'written',
            (error: unknown) => error,
          );
      },
    );
    expect((await handle(delivery(1))).status).toBe(500);
    expect(String((after as Error)?.message ?? after)).toMatch(/ended the transaction/);
    expect(await count(event.paymentId)).toBe(0);
    expect(await count(`after:${event.paymentId}`)).toBe(0);
    expect((await handle(delivery(2))).status).toBe(200);
    expect(await count(event.paymentId)).toBe(1);
  } finally {
    other.release();
    await otherPool.end();
    await pool.query(tables.drop);
  }
}

describe('KnexStore on MariaDB', () => {
  let knex: Knex;
  const tableName = inbox();
  beforeAll(() => {
    knex = knexFactory({ client: 'mysql2', connection: DATABASE_URL, pool: { min: 0, max: 10 } });
  });
  afterAll(() => knex.destroy());

  const writes: TransactionalWrites<Knex.Transaction> = {
    write: async (tx, marker) => {
      await tx(marks).insert({ marker });
    },
    count,
    slowQuery: (tx, ms) => tx.raw('select sleep(?)', [ms / 1000]),
  };
  for (const c of transactionalStoreConformance(() => new KnexStore({ knex, tableName }), writes)) it(c.name, c.run);

  it("refuses the client's own transaction inside a delivery", () =>
    expectOwnTransactionRefused(new KnexStore({ knex, tableName }), () => knex.transaction(async () => {})));

  it('a deadlock the handler caught: the write after it is refused, 500, nothing credited; the retry credits once', () =>
    expectCaughtDeadlockFails(new KnexStore({ knex, tableName }), writes, (tx, text) => tx.raw(text)));
});

describe('TypeOrmStore on MariaDB', () => {
  let dataSource: DataSource;
  const tableName = inbox();
  beforeAll(async () => {
    dataSource = new DataSource({ type: 'mysql', url: DATABASE_URL, poolSize: 10 });
    await dataSource.initialize();
  });
  afterAll(() => dataSource.destroy());

  const writes: TransactionalWrites<EntityManager> = {
    write: async (tx, marker) => {
      await tx.query(`insert into ${marks} (marker) values (?)`, [marker]);
    },
    count,
    slowQuery: (tx, ms) => tx.query('select sleep(?)', [ms / 1000]),
  };
  for (const c of transactionalStoreConformance(() => new TypeOrmStore({ dataSource, tableName }), writes)) {
    it(c.name, c.run);
  }

  it("refuses the client's own transaction inside a delivery", () =>
    expectOwnTransactionRefused(new TypeOrmStore({ dataSource, tableName }), () =>
      dataSource.transaction(async () => {}),
    ));

  it('a deadlock the handler caught: the write after it is refused, 500, nothing credited; the retry credits once', () =>
    expectCaughtDeadlockFails(new TypeOrmStore({ dataSource, tableName }), writes, (tx, text) => tx.query(text)));
});

describe('round trips of Knex and TypeORM on MariaDB, counted by the server', () => {
  it('fresh: no more than the hand-rolled 4 on MariaDB; duplicate: no more than its 3', async () => {
    const target = new URL(DATABASE_URL);
    const proxy = await startRoundTripProxy('mysql', Number(target.port || 3306));
    target.port = String(proxy.port);
    const knex = knexFactory({ client: 'mysql2', connection: target.toString(), pool: { min: 0, max: 4 } });
    const dataSource = new DataSource({ type: 'mysql', url: target.toString(), poolSize: 4 });
    await dataSource.initialize();
    try {
      const stores = [
        ['Knex', new KnexStore({ knex, tableName: inbox() })],
        ['TypeORM', new TypeOrmStore({ dataSource, tableName: inbox() })],
      ] as const;
      for (const [name, store] of stores) {
        await store.migrate();
        const subject = {
          store: store as never,
          credit: (tx: never, marker: string) =>
            (tx as { query?: unknown }).query === undefined
              ? (tx as Knex.Transaction)(marks).insert({ marker })
              : (tx as EntityManager).query(`insert into ${marks} (marker) values (?)`, [marker]),
        };
        const { fresh, credit, duplicate } = await deliveryRoundTrips(proxy, subject);
        console.info(`round trips on MariaDB, ${name}: fresh ${fresh} (the credit ${credit}), duplicate ${duplicate}`);
        expect(fresh - credit).toBeLessThanOrEqual(3);
        expect(duplicate).toBeLessThanOrEqual(3);
        await creditOnce(subject, `long:${Math.random()}`, `p_${'x'.repeat(254)}`);
      }
    } finally {
      await knex.destroy();
      await dataSource.destroy();
      await proxy.close();
    }
  });
});
