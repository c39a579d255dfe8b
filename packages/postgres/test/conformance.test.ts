import type { PGlite, Transaction } from '@electric-sql/pglite';
import { type TransactionalWrites, transactionalStoreConformance } from '@service-pay/core/testing';
import type pg from 'pg';
import postgres, { type Sql, type TransactionSql } from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresStore } from '../src/index.js';
import { PostgresJsStore } from '../src/postgres-js.js';
import { DATABASE_URL, openPGlite, openPool, uniqueName } from './support/database.js';

describe('PostgresStore on PostgreSQL (node-postgres): transactional conformance', () => {
  let pool: pg.Pool;
  const inbox = uniqueName('conf_inbox');
  const marks = uniqueName('conf_marks');

  beforeAll(async () => {
    pool = await openPool();
    await new PostgresStore({ pool, tableName: inbox }).migrate();
    await pool.query(`create table ${marks} (marker text not null)`);
  });
  afterAll(async () => {
    await pool.query(`drop table if exists ${marks}`);
    await pool.query(`drop table if exists ${inbox}`);
    await pool.end();
  });

  const writes: TransactionalWrites<pg.PoolClient> = {
    write: async (tx, marker) => {
      await tx.query(`insert into ${marks} (marker) values ($1)`, [marker]);
    },
    count: async (marker) =>
      Number((await pool.query(`select count(*) from ${marks} where marker = $1`, [marker])).rows[0].count),
    slowQuery: (tx, ms) => tx.query('select pg_sleep($1)', [ms / 1000]),
  };
  for (const c of transactionalStoreConformance(() => new PostgresStore({ pool, tableName: inbox }), writes)) {
    it(c.name, c.run);
  }

  it('gives every pool client back: none is left checked out after the suite', async () => {
    // Everything above has ended; clients still out would be a leak (the pool would run dry).
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(pool.totalCount - pool.idleCount).toBe(0);
    expect(pool.waitingCount).toBe(0);
  });
});

describe('PostgresStore on PGlite: transactional conformance', () => {
  let db: PGlite;
  const inbox = 'service_pay_inbox';

  beforeAll(async () => {
    db = await openPGlite();
    await new PostgresStore({ pglite: db }).migrate();
    await db.exec('create table marks (marker text not null)');
  });
  afterAll(async () => {
    await db.close();
  });

  // No slowQuery: PGlite runs statements on the app's own thread, so a long one blocks the whole process
  // (the deadline timer included) and nothing can interrupt it. The rollback case still runs, with the
  // handler holding the transaction between statements, as a handler awaiting an API call does.
  const writes: TransactionalWrites<Transaction> = {
    write: async (tx, marker) => {
      await tx.query('insert into marks (marker) values ($1)', [marker]);
    },
    count: async (marker) =>
      Number(
        (await db.query<{ n: number }>('select count(*)::int as n from marks where marker = $1', [marker])).rows[0]?.n,
      ),
  };
  // PGlite has one connection, so two transactions are never open at once: the store answers in-progress
  // for a second key while one is open (tested below) instead of the suite's "keys are independent".
  const cases = transactionalStoreConformance(() => new PostgresStore({ pglite: db, tableName: inbox }), writes);
  for (const c of cases) {
    if (c.name === 'keys are independent') it.skip(`${c.name} (PGlite: one transaction at a time; see below)`, c.run);
    else it(c.name, c.run);
  }

  it('answers a second key in-progress at once while a transaction is open, and claims it once that ends', async () => {
    const store = new PostgresStore({ pglite: db });
    const first = await store.begin('pglite:one', 'fp');
    expect(first.state).toBe('claimed');
    expect(await store.begin('pglite:two', 'fp')).toEqual({ state: 'in-progress', retryAfterMs: 1_000 });
    // A second store on the same PGlite sees the same: the connection is per database, not per store.
    expect((await new PostgresStore({ pglite: db }).begin('pglite:two', 'fp')).state).toBe('in-progress');
    if (first.state === 'claimed') await first.session.rollback(new Error('done'));
    const second = await store.begin('pglite:two', 'fp');
    expect(second.state).toBe('claimed');
    if (second.state === 'claimed') await second.session.rollback(new Error('done'));
  });
});

describe('PostgresJsStore on PostgreSQL (postgres.js): transactional conformance', () => {
  let pool: pg.Pool;
  let sql: Sql;
  const inbox = uniqueName('conf_inbox_js');
  const marks = uniqueName('conf_marks_js');

  beforeAll(async () => {
    pool = await openPool();
    sql = postgres(DATABASE_URL, { max: 25, onnotice: () => {} });
    await new PostgresJsStore({ sql, tableName: inbox }).migrate();
    await pool.query(`create table ${marks} (marker text not null)`);
  });
  afterAll(async () => {
    await pool.query(`drop table if exists ${marks}`);
    await pool.query(`drop table if exists ${inbox}`);
    await sql.end({ timeout: 5 });
    await pool.end();
  });

  const writes: TransactionalWrites<TransactionSql> = {
    write: async (tx, marker) => {
      await tx`insert into ${tx(marks)} (marker) values (${marker})`;
    },
    count: async (marker) =>
      Number((await pool.query(`select count(*) from ${marks} where marker = $1`, [marker])).rows[0].count),
    slowQuery: (tx, ms) => tx`select pg_sleep(${ms / 1000})`,
  };
  for (const c of transactionalStoreConformance(() => new PostgresJsStore({ sql, tableName: inbox }), writes)) {
    it(c.name, c.run);
  }

  it('ctx.tx refuses BEGIN/COMMIT/ROLLBACK and any use once the delivery has ended', async () => {
    const store = new PostgresJsStore({ sql, tableName: inbox });
    const claim = await store.begin(`guard:${uniqueName('k')}`, 'fp');
    if (claim.state !== 'claimed') throw new Error(`expected a claim, got ${claim.state}`);
    const { tx } = claim.session;
    for (const text of ['COMMIT', 'rollback', 'BEGIN', 'end', 'start transaction']) {
      expect(() => tx.unsafe(text)).toThrow(/ctx\.tx is already the delivery transaction/);
    }
    await tx.unsafe('savepoint sp_inner'); // savepoints are fine
    await tx.unsafe('release savepoint sp_inner');
    await claim.session.rollback(new Error('done'));
    expect(() => tx`select 1`).toThrow(/this delivery transaction has ended/);
    expect(() => tx.unsafe('select 1')).toThrow(/this delivery transaction has ended/);
  });

  it('refuses what is not a postgres.js instance, and bad table names', () => {
    expect(() => new PostgresJsStore({ sql: {} as never })).toThrow(/options\.sql must be a postgres\.js instance/);
    expect(() => new PostgresJsStore(undefined as never)).toThrow(/options\.sql must be a postgres\.js instance/);
    expect(() => new PostgresJsStore({ sql, tableName: 'a-b' })).toThrow(/tableName must be/);
  });
});
