import { createWebhookHandler, signWebhook } from '@service-pay/core';
import { samplePaymentPaidEvent } from '@service-pay/core/testing';
import { type GuardSubject, talkAroundTeardown, writeGuardCases } from '@service-pay/sql/testing';
import { Kysely, sql as kyselySql, PostgresDialect } from 'kysely';
import type pg from 'pg';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { PostgresStore } from '../src/index.js';
import { KyselyStore } from '../src/kysely.js';
import { guardSql, PostgresJsStore } from '../src/postgres-js.js';
import { DATABASE_URL, openPool, uniqueName } from './support/database.js';

/**
 * The write guard beyond the shared case list, which every client of the registry runs (clients.test.ts):
 * what a read leaves on a pooled connection, Kysely given no pool, and postgres.js's start-up warning.
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
    raw: { dialect: 'postgres', table: marks, send: (text) => kyselySql.raw(text).execute(db) },
    apiForms: {
      'db.selectNoFrom(credit_fn(marker))': (marker) =>
        db.selectNoFrom(kyselySql<number>`${kyselySql.id(`${marks}_credit`)}(${marker}::text)`.as('c')).execute(),
      'db.connection() then select credit_fn(marker)': (marker) =>
        db
          .connection()
          .execute((one) => kyselySql`select ${kyselySql.id(`${marks}_credit`)}(${marker}::text)`.execute(one)),
    },
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

describe('PostgresJsStore and guardSql', () => {
  // postgres.js's tagged template is the instance's own call: only the function the app calls can see it,
  // so the app makes its `sql` with guardSql and gives the store that one.
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
