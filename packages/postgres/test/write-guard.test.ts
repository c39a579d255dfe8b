import type { PGlite } from '@electric-sql/pglite';
import { type GuardSubject, talkAroundTeardown, writeGuardCases } from '@service-pay/sql/testing';
import { Kysely, sql as kyselySql, PostgresDialect } from 'kysely';
import pg from 'pg';

const { Query } = pg;

import { createWebhookHandler, signWebhook } from '@service-pay/core';
import { samplePaymentPaidEvent } from '@service-pay/core/testing';
import postgres, { type TransactionSql } from 'postgres';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { PostgresStore } from '../src/index.js';
import { KyselyStore } from '../src/kysely.js';
import type { PGliteTransaction } from '../src/pglite-types.js';
import { guardSql, PostgresJsStore } from '../src/postgres-js.js';
import { DATABASE_URL, openPGlite, openPool, uniqueName } from './support/database.js';

/**
 * The write guard's cases (the delivery's transaction is the only way to write) on PostgresStore's own
 * clients: node-postgres (a Pool) and PGlite. Credits are counted in a table without a unique constraint.
 * The ORM stores run the same cases in orm-stores.test.ts.
 */
const marks = uniqueName('guard_marks');
const inbox = uniqueName('guard_inbox');
let pool: pg.Pool;

beforeAll(async () => {
  pool = await openPool();
  await pool.query(`create table ${marks} (id serial primary key, marker text not null)`);
});
afterAll(async () => {
  await pool.query(`drop table if exists ${marks}, ${inbox}`);
  await pool.query(`drop function if exists ${inbox}_claim(text)`).catch(() => {});
  for (const statement of talkAroundTeardown('postgres', marks)) await pool.query(statement);
  await pool.end();
});

const insert = `insert into ${marks} (marker) values ($1)`;
const SECRET = 'whsec_read_only_after_0123456789abcdef';

describe('PostgresStore (node-postgres): the delivery transaction is the only way to write', () => {
  const subject: GuardSubject<pg.PoolClient> = {
    store: () => new PostgresStore({ pool, tableName: inbox }),
    lazy: false,
    write: (tx, marker) => tx.query(insert, [marker]),
    startWrite: (tx, marker) => tx.query(insert, [marker]),
    globalWrite: (marker) => pool.query(insert, [marker]),
    globalRead: () => pool.query(`select * from ${marks} limit 1`),
    raw: { dialect: 'postgres', table: marks, send: (text) => pool.query(text) },
    apiForms: {
      "pool.connect() then client.query('select credit_fn($1)')": async (marker) => {
        const client = await pool.connect();
        try {
          return await client.query(`select ${marks}_credit($1)`, [marker]);
        } finally {
          client.release();
        }
      },
      'pool.query({ text, values }) of select credit_fn($1)': (marker) =>
        pool.query({ text: `select ${marks}_credit($1)`, values: [marker] }),
      'a submitted Query of select credit_fn($1) on a pool.connect() client': async (marker) => {
        const client = await pool.connect();
        try {
          const submitted = client.query(new Query(`select ${marks}_credit($1)`, [marker]));
          await new Promise<void>((resolve, reject) => {
            submitted.on('end', () => resolve());
            submitted.on('error', reject);
          });
        } finally {
          client.release();
        }
      },
    },
    callbackPool: async () => {
      const two = await openPool({ max: 2 });
      return {
        store: new PostgresStore({ pool: two, tableName: inbox }),
        write: (tx, marker) => tx.query(insert, [marker]),
        callbackQuery: (text, callback) => void two.query(text, (error: Error) => callback(error)),
        close: () => two.end(),
      };
    },
    ownTransactions: {
      'pool.connect() + BEGIN': async (marker) => {
        const client = await pool.connect();
        try {
          await client.query('BEGIN');
          await client.query(insert, [marker]);
          await client.query('COMMIT');
        } finally {
          client.release();
        }
      },
    },
    stepwise: ['pool.connect() + BEGIN'],
    count: async (marker) =>
      Number((await pool.query(`select count(*)::int as n from ${marks} where marker = $1`, [marker])).rows[0].n),
    poolOfOne: async () => {
      const one = await openPool({ max: 1 });
      return {
        store: new PostgresStore({ pool: one, tableName: inbox }),
        write: (tx, marker) => tx.query(insert, [marker]),
        globalWrite: (marker) => one.query(insert, [marker]),
        close: () => one.end(),
      };
    },
  };
  for (const c of writeGuardCases(subject)) it(c.name, c.run);
});

it('nothing of the read-only mode outlives a read: the pool serves the next request read-write', async () => {
  const two = await openPool({ max: 2 });
  try {
    const store = new PostgresStore({ pool: two, tableName: inbox });
    const event = samplePaymentPaidEvent();
    const handle = createWebhookHandler({
      secret: SECRET,
      store,
      onPaymentPaid: async (paid, ctx) => {
        await two.query('select 1');
        const client = await two.connect();
        try {
          await client.query('select 1');
        } finally {
          client.release();
        }
        await (ctx.tx as pg.PoolClient).query(insert, [paid.paymentId]);
      },
    });
    const { body, headers } = signWebhook({ event, secret: SECRET, deliveryId: 'dl_read_only_after' });
    expect((await handle({ method: 'POST', headers, rawBody: body })).status).toBe(200);
    const [a, b] = await Promise.all([two.connect(), two.connect()]);
    try {
      for (const client of [a, b]) {
        expect((await client.query('show transaction_read_only')).rows[0].transaction_read_only).toBe('off');
        await client.query(insert, [`after:${event.paymentId}`]);
      }
    } finally {
      a.release();
      b.release();
    }
  } finally {
    await two.end();
  }
});

describe('PostgresStore (PGlite): the delivery transaction is the only way to write', () => {
  let pglite: PGlite;
  beforeAll(async () => {
    pglite = await openPGlite();
    await pglite.exec('create table marks (id serial primary key, marker text not null)');
  });
  afterAll(() => pglite.close());
  const pgInsert = 'insert into marks (marker) values ($1)';
  const subject: GuardSubject<PGliteTransaction> = {
    store: () => new PostgresStore({ pglite }) as never,
    lazy: false,
    oneConnection: true,
    write: (tx, marker) => tx.query(pgInsert, [marker]),
    startWrite: (tx, marker) => tx.query(pgInsert, [marker]),
    globalWrite: (marker) => pglite.query(pgInsert, [marker]),
    // PGlite is one connection, held by the delivery: a read through the instance would wait for the
    // delivery to end, so the read case reads through ctx-free code that does not touch the database.
    globalRead: async () => undefined,
    ownTransactions: {
      'pglite.transaction()': (marker) => pglite.transaction(async (tx) => void (await tx.query(pgInsert, [marker]))),
    },
    count: async (marker) =>
      Number(
        (await pglite.query<{ n: number }>('select count(*)::int as n from marks where marker = $1', [marker])).rows[0]
          ?.n,
      ),
  };
  for (const c of writeGuardCases(subject)) it(c.name, c.run);
});

describe("KyselyStore without its pool: writes through the app's db are still refused", () => {
  // The README's shortest form gives the store only `db`: its executor is guarded, so a credit through
  // `db` beside ctx.tx is refused without the pool (a write sent through the pool itself is then not seen).
  type Marks = Record<string, { marker: string }>;
  let db: Kysely<Marks>;
  beforeAll(() => {
    db = new Kysely<Marks>({ dialect: new PostgresDialect({ pool }) });
  });
  const subject: GuardSubject<import('kysely').Transaction<Marks>> = {
    store: () => new KyselyStore({ db, tableName: inbox }),
    lazy: false,
    write: (tx, marker) => tx.insertInto(marks).values({ marker }).execute(),
    startWrite: (tx, marker) => tx.insertInto(marks).values({ marker }).execute(),
    globalWrite: (marker) => db.withSchema('public').insertInto(marks).values({ marker }).execute(),
    globalRead: () => db.selectFrom(marks).selectAll().limit(1).execute(),
    raw: { dialect: 'postgres', table: marks, send: (text) => kyselySql.raw(text).execute(db), textOnly: true },
    ownTransactions: {
      'db.transaction()': (marker) =>
        db.transaction().execute(async (trx) => {
          await trx.insertInto(marks).values({ marker }).execute();
        }),
    },
    count: async (marker) =>
      Number((await pool.query(`select count(*)::int as n from ${marks} where marker = $1`, [marker])).rows[0].n),
    poolOfOne: async () => {
      const one = await openPool({ max: 1 });
      const onOne = new Kysely<Marks>({ dialect: new PostgresDialect({ pool: one }) });
      return {
        store: new KyselyStore({ db: onOne, tableName: inbox }),
        write: (tx, marker) => tx.insertInto(marks).values({ marker }).execute(),
        globalWrite: (marker) => onOne.insertInto(marks).values({ marker }).execute(),
        close: () => onOne.destroy(),
      };
    },
  };
  for (const c of writeGuardCases(subject)) it(c.name, c.run);
});

describe("PostgresJsStore on guardSql's instance: the tagged template is refused too", () => {
  // postgres.js's tagged template is the instance's own call: only the function the app calls can see it,
  // so the app makes its `sql` with guardSql and gives the store that one.
  let sql: ReturnType<typeof postgres>;
  beforeAll(() => {
    sql = guardSql(postgres(DATABASE_URL, { max: 10, onnotice: () => {} }));
  });
  afterAll(() => sql.end({ timeout: 5 }));
  const subject: GuardSubject<TransactionSql> = {
    store: () => new PostgresJsStore({ sql, tableName: inbox }),
    lazy: true,
    write: (tx, marker) => tx`insert into ${tx(marks)} (marker) values (${marker})`,
    startWrite: (tx, marker) => tx`insert into ${tx(marks)} (marker) values (${marker})`,
    globalWrite: (marker) => sql`insert into ${sql(marks)} (marker) values (${marker})`,
    globalRead: () => sql`select * from ${sql(marks)} limit 1`,
    raw: { dialect: 'postgres', table: marks, send: (text) => sql.unsafe(text), textOnly: true },
    ownTransactions: {
      'sql.begin()': (marker) => sql.begin((t) => t`insert into ${t(marks)} (marker) values (${marker})`),
      'sql`begin` on a reserved connection': async (marker) => {
        const reserved = await sql.reserve();
        try {
          await reserved.unsafe('begin');
          await reserved.unsafe(`insert into ${marks} (marker) values ($1)`, [marker]);
          await reserved.unsafe('commit');
        } finally {
          reserved.release();
        }
      },
    },
    stepwise: ['sql`begin` on a reserved connection'],
    count: async (marker) =>
      Number((await pool.query(`select count(*)::int as n from ${marks} where marker = $1`, [marker])).rows[0].n),
    poolOfOne: async () => {
      const one = guardSql(postgres(DATABASE_URL, { max: 1, onnotice: () => {} }));
      return {
        store: new PostgresJsStore({ sql: one, tableName: inbox }),
        write: (tx, marker) => tx`insert into ${tx(marks)} (marker) values (${marker})`,
        globalWrite: (marker) => one`insert into ${one(marks)} (marker) values (${marker})`,
        close: () => one.end({ timeout: 5 }),
      };
    },
  };
  for (const c of writeGuardCases(subject)) it(c.name, c.run);

  it('a store given a guarded instance says nothing at start-up; given a plain one, it warns once', () => {
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    try {
      new PostgresJsStore({ sql: guardSql(postgres(DATABASE_URL, { max: 1 })), tableName: inbox });
      expect(warn).not.toHaveBeenCalled();
      new PostgresJsStore({ sql: postgres(DATABASE_URL, { max: 1 }), tableName: inbox });
      expect(warn).toHaveBeenCalledTimes(1);
      expect(String(warn.mock.calls[0]?.[0])).toContain('guardSql');
    } finally {
      warn.mockRestore();
    }
  });
});
