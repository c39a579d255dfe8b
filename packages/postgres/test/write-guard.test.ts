import { createWebhookHandler, type HandlerOptions, signWebhook } from '@service-pay/core';
import { samplePaymentPaidEvent } from '@service-pay/core/testing';
import { type GuardSubject, talkAroundSetup, talkAroundTeardown, writeGuardCases } from '@service-pay/sql/testing';
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
 * what a read leaves on a pooled connection, Kysely given no pool, and postgres.js (its query API on reads
 * in a delivery, a cursor over a function that inserts, its start-up warning).
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
      'db.withSchema(public).selectNoFrom(credit_fn(marker))': (marker) =>
        db
          .withSchema('public')
          .selectNoFrom(kyselySql<number>`${kyselySql.id(`${marks}_credit`)}(${marker}::text)`.as('c'))
          .execute(),
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
  let sql: ReturnType<typeof postgres>;
  beforeAll(() => {
    sql = guardSql(postgres(DATABASE_URL, { max: 10, onnotice: () => {} }));
  });
  afterAll(() => sql.end({ timeout: 5 }));

  it("reads through the app's sql in a delivery keep postgres.js's query API, each in a read-only transaction", async () => {
    const event = samplePaymentPaidEvent();
    const seen: Record<string, unknown> = {};
    const handle = createWebhookHandler({
      secret: SECRET,
      store: new PostgresJsStore({ sql, tableName: inbox }),
      onPaymentPaid: async (paid, ctx) => {
        const series = (n: number) =>
          sql`select x, current_setting('transaction_read_only') as ro from generate_series(1, ${n}) x`;
        seen.values = await sql`select 1 as a, 2 as b`.values();
        seen.unsafeValues = await sql.unsafe('select 1 as a, 2 as b').values();
        const each: unknown[] = [];
        await series(3).forEach((row) => void each.push(row.x));
        seen.forEach = each;
        const batches: unknown[] = [];
        await series(5).cursor(2, (rows) => void batches.push(rows.map((row) => row.x)));
        seen.cursorCallback = batches;
        const iterated: unknown[] = [];
        for await (const rows of series(5).cursor(2)) iterated.push(rows.map((row) => [row.x, row.ro]));
        seen.cursorIterator = iterated;
        for await (const rows of series(5).cursor(1)) {
          seen.cursorBreak = rows.map((row) => row.x);
          break;
        }
        seen.ro = (await sql`select current_setting('transaction_read_only') as ro`)[0]?.ro;
        await ctx.tx`insert into ${ctx.tx(marks)} (marker) values (${paid.paymentId})`;
      },
    });
    const { body, headers } = signWebhook({ event, secret: SECRET, deliveryId: `dl_pjs_api_${event.paymentId}` });
    expect((await handle({ method: 'POST', headers, rawBody: body })).status).toBe(200);
    expect(seen).toEqual({
      values: [[1, 2]],
      unsafeValues: [[1, 2]],
      forEach: [1, 2, 3],
      cursorCallback: [[1, 2], [3, 4], [5]],
      cursorIterator: [
        [
          [1, 'on'],
          [2, 'on'],
        ],
        [
          [3, 'on'],
          [4, 'on'],
        ],
        [[5, 'on']],
      ],
      cursorBreak: [1],
      ro: 'on',
    });
    // Outside a delivery, the same instance is itself: read-write, no transaction of its own.
    expect((await sql`select current_setting('transaction_read_only') as ro`)[0]?.ro).toBe('off');
  });

  // One delivery on PostgresJsStore whose handler writes through the app's `sql` by some path: it must be
  // answered 500 WRITE_OUTSIDE_TRANSACTION with no credit made.
  async function expectRefused(label: string, onPaymentPaid: HandlerOptions<PostgresJsStore>['onPaymentPaid']) {
    const event = samplePaymentPaidEvent();
    let code: unknown;
    const handle = createWebhookHandler({
      secret: SECRET,
      store: new PostgresJsStore({ sql, tableName: inbox }),
      logger: {
        warn: () => {},
        error: (fields) => {
          code = (fields as { err?: { code?: unknown } }).err?.code;
        },
      },
      onPaymentPaid,
    });
    const { body, headers } = signWebhook({ event, secret: SECRET, deliveryId: `dl_pjs_${label}_${event.paymentId}` });
    expect((await handle({ method: 'POST', headers, rawBody: body })).status).toBe(500);
    expect(code).toBe('WRITE_OUTSIDE_TRANSACTION');
    const counted = await pool.query(`select count(*)::int as n from ${marks} where marker = $1`, [event.paymentId]);
    expect(counted.rows[0].n).toBe(0);
  }

  it("a write in a read's forEach or cursor callback runs in the handler's context: refused, 0 credits", async () => {
    for (const form of ['forEach', 'cursor'] as const) {
      await expectRefused(form, async (paid, ctx) => {
        const write = () => sql.unsafe(`insert into ${marks} (marker) values ($1)`, [paid.paymentId]).catch(() => {});
        if (form === 'forEach') await sql`select 1`.forEach(() => void write());
        else await sql`select 1`.cursor(1, () => write());
        await ctx.tx`select 1`;
      });
    }
  });

  it('a cursor over a function that inserts, through the app sql in a delivery, is refused: 0 credits', async () => {
    await sql.unsafe(talkAroundSetup('postgres', marks)[0] as string);
    await expectRefused('cursor', async (paid) => {
      for await (const rows of sql`select ${sql(`${marks}_credit`)}(${paid.paymentId}::text)`.cursor(1)) void rows;
    });
  });

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
