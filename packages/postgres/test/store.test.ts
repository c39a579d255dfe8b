import type { PGlite, Transaction } from '@electric-sql/pglite';
import type { TxOf } from '@service-pay/core';
import { quoteLiteral, tableName } from '@service-pay/sql/postgres';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { type PGliteLike, type PGliteTransaction, PostgresStore } from '../src/index.js';
import { DATABASE_URL, openPGlite, openPool, uniqueName } from './support/database.js';

describe('PostgresStore options', () => {
  it('types ctx.tx from the flavour', () => {
    const pool = new pg.Pool();
    const fromPool = new PostgresStore({ pool });
    expectTypeOf<TxOf<typeof fromPool>>().toEqualTypeOf<pg.PoolClient>();
    expectTypeOf<TxOf<PostgresStore>>().toEqualTypeOf<pg.PoolClient>();
    const fromPGlite = new PostgresStore({ pglite: { transaction: () => {}, query: () => {} } as unknown as PGlite });
    expectTypeOf<TxOf<typeof fromPGlite>>().toEqualTypeOf<PGliteTransaction>();
    // The package's own PGlite types, which PGlite's fit: ctx.tx offers what PGlite's Transaction does.
    expectTypeOf<Transaction>().toExtend<PGliteTransaction>();
    expectTypeOf<PGlite>().toExtend<PGliteLike>();
    expect(fromPool).toBeInstanceOf(PostgresStore);
    expect(fromPool.kind).toBe('transactional');
    void pool.end();
  });

  it('refuses what is not a pool or a PGlite, both at once, and bad table names, with a clear message', () => {
    const make = (options: unknown) => () => new PostgresStore(options as never);
    expect(make(undefined)).toThrow(/pass \{ pool \}/);
    expect(make({})).toThrow(/pass \{ pool \}/);
    expect(make({ pool: { query: 1 } })).toThrow(/must be a node-postgres Pool/);
    expect(make({ pglite: {} })).toThrow(/must be a PGlite instance/);
    expect(make({ pool: new pg.Pool(), pglite: {} })).toThrow(/not both/);
    for (const bad of ['', 'a-b', '1abc', 'a.b.c', 'x"; drop table y; --', 'a b', 'x'.repeat(64), 42, 'a.']) {
      expect(make({ pool: new pg.Pool(), tableName: bad })).toThrow(/tableName must be/);
    }
  });

  it('quotes table names exactly as given, schema included', () => {
    expect(tableName('billing.Inbox')).toMatchObject({
      sql: '"billing"."Inbox"',
      createdAtIndexSql: '"Inbox_created_at_idx"',
      paymentIdIndexSql: '"Inbox_payment_id_idx"',
    });
    expect(tableName('x'.repeat(63)).paymentIdIndexSql).toBe(`"${'x'.repeat(48)}_payment_id_idx"`);
    expect(tableName().sql).toBe('"service_pay_inbox"');
  });

  it('writes literals that survive quotes, backslashes and unicode, and refuses NUL', async () => {
    const pool = await openPool();
    try {
      for (const value of ["o'k", 'why?', 'a\\?b', 'back\\slash', "\\'both\\''", 'ünï€ode 🎉', '']) {
        const { rows } = await pool.query(`select ${quoteLiteral(value)} as v`);
        expect(rows[0].v).toBe(value);
      }
      await pool.query('set standard_conforming_strings = off');
      const { rows } = await pool.query(`select ${quoteLiteral("a\\'b")} as v`);
      expect(rows[0].v).toBe("a\\'b");
    } finally {
      await pool.end();
    }
    expect(() => quoteLiteral('a\0b')).toThrow(/NUL/);
  });

  it('refuses a bad prune argument', async () => {
    const store = new PostgresStore({ pool: new pg.Pool() });
    for (const bad of [undefined, {}, { olderThanMs: -1 }, { olderThanMs: Number.NaN }, { olderThanMs: '1' }]) {
      await expect(store.prune(bad as never)).rejects.toThrow(/olderThanMs must be/);
    }
  });
});

describe('PostgresStore on PostgreSQL: migrate, prune, setup errors', () => {
  let pool: pg.Pool;
  const tables: string[] = [];
  beforeAll(async () => {
    pool = await openPool();
  });
  afterAll(async () => {
    for (const t of tables) await pool.query(`drop table if exists ${t}`);
    await pool.query('drop schema if exists sp_test_schema cascade');
    await pool.end();
  });
  /** A PostgresStore on a table of its own (dropped after), migrated, and its claim of key `k`. */
  const claimOnNewTable = async (label: string) => {
    const name = uniqueName(label);
    tables.push(name);
    const store = new PostgresStore({ pool, tableName: name });
    await store.migrate();
    const claim = await store.begin('k', 'fp');
    if (claim.state !== 'claimed') throw new Error('expected claimed');
    return { store, session: claim.session };
  };

  it('migrate is idempotent and safe when five processes run it at once', async () => {
    const name = uniqueName('migrate');
    tables.push(name);
    // Five pools: five connections racing, as five app processes starting together would.
    const pools = Array.from({ length: 5 }, () => new pg.Pool({ connectionString: DATABASE_URL, max: 1 }));
    try {
      await Promise.all(pools.map((p) => new PostgresStore({ pool: p, tableName: name }).migrate()));
      await new PostgresStore({ pool, tableName: name }).migrate();
    } finally {
      await Promise.all(pools.map((p) => p.end()));
    }
    const { rows } = await pool.query(
      `select column_name, data_type, is_nullable from information_schema.columns where table_name = $1 order by ordinal_position`,
      [name],
    );
    expect(rows.map((r) => `${r.column_name} ${r.data_type} ${r.is_nullable}`)).toEqual([
      'key text NO',
      'fingerprint text NO',
      'payment_id text NO',
      'delivery_id text YES',
      'source text NO',
      'outcome text NO',
      'reason text YES',
      'created_at timestamp with time zone NO',
    ]);
    // Prune walks created_at; shops and support look rows up by payment_id.
    const indexes = await pool.query('select indexdef from pg_indexes where tablename = $1 order by indexname', [name]);
    expect(indexes.rows.map((r) => r.indexdef.replace(/^.* USING /, ''))).toEqual([
      'btree (created_at)',
      'btree (payment_id)',
      'btree (key)',
    ]);
  });

  it('works in a schema of its own', async () => {
    await pool.query('create schema if not exists sp_test_schema');
    const store = new PostgresStore({ pool, tableName: 'sp_test_schema.Inbox' });
    await store.migrate();
    const claim = await store.begin('k', 'fp');
    expect(claim.state).toBe('claimed');
    if (claim.state === 'claimed') {
      await claim.session.commit({
        outcome: 'credited',
        paymentId: 'p_1',
        deliveryId: undefined,
        source: 'reconciliation',
      });
    }
    const { rows } = await pool.query('select key, delivery_id, source from sp_test_schema."Inbox"');
    expect(rows).toEqual([{ key: 'k', delivery_id: null, source: 'reconciliation' }]);
  });

  it('prune deletes rows older than olderThanMs and keeps the rest', async () => {
    const name = uniqueName('prune');
    tables.push(name);
    const store = new PostgresStore({ pool, tableName: name });
    await store.migrate();
    await pool.query(
      `insert into ${name} (key, fingerprint, payment_id, source, outcome, created_at)
       select 'old:' || i, 'fp', 'p_' || i, 'webhook', 'credited', now() - interval '40 days' from generate_series(1, 5200) i`,
    );
    await pool.query(
      `insert into ${name} (key, fingerprint, payment_id, source, outcome) values ('new', 'fp', 'p_new', 'webhook', 'credited')`,
    );
    expect(await store.prune({ olderThanMs: 30 * 24 * 3600 * 1000 })).toBe(5200);
    expect((await pool.query(`select key from ${name}`)).rows).toEqual([{ key: 'new' }]);
    expect(await store.prune({ olderThanMs: 30 * 24 * 3600 * 1000 })).toBe(0);
  });

  it('a missing table is an error that says to run migrate(), and leaks no pool client', async () => {
    const store = new PostgresStore({ pool, tableName: uniqueName('missing'), autoMigrate: false });
    await expect(store.begin('k', 'fp')).rejects.toThrow(
      /^PostgresStore: .*does not exist; run await store.migrate\(\)/,
    );
    expect(pool.totalCount - pool.idleCount).toBe(0);
  });

  it('ctx.tx refuses release() and every query once the transaction has ended', async () => {
    const { session } = await claimOnNewTable('guard');
    const { tx } = session;
    expect(() => tx.release()).toThrow(/do not release ctx.tx/);
    expect((await tx.query('select 1 as one')).rows).toEqual([{ one: 1 }]);
    await session.commit({ outcome: 'credited', paymentId: 'p_1', deliveryId: 'dl_1', source: 'webhook' });
    await expect(tx.query('select 1')).rejects.toThrow(/transaction has ended/);
    const viaCallback = await new Promise((resolve) => tx.query('select 1', (error: Error) => resolve(error)));
    expect(String(viaCallback)).toMatch(/transaction has ended/);
    await expect(
      session.commit({ outcome: 'credited', paymentId: 'p_1', deliveryId: 'dl_1', source: 'webhook' }),
    ).rejects.toThrow(/has ended/);
    await session.rollback(new Error('after the commit: a no-op'));
    expect(pool.totalCount - pool.idleCount).toBe(0);
  });

  it('a connection that drops while the handler holds it does not crash the process; the key is free again', async () => {
    const { store, session } = await claimOnNewTable('drop');
    const pid = (session.tx as unknown as { processID: number }).processID;
    await pool.query('select pg_terminate_backend($1, 5000)', [pid]);
    await expect(session.tx.query('select 1')).rejects.toThrow();
    await session.rollback(new Error('connection lost'));
    const again = await store.begin('k', 'fp');
    expect(again.state).toBe('claimed');
    if (again.state === 'claimed') await again.session.rollback(new Error('done'));
  });
});

describe('PostgresStore on PGlite: migrate and prune', () => {
  let db: PGlite;
  beforeAll(async () => {
    db = await openPGlite();
  });
  afterAll(() => db.close());

  it('migrate twice, prune old rows, a missing table says to migrate', async () => {
    await expect(
      new PostgresStore({ pglite: db, tableName: 'nope', autoMigrate: false }).begin('k', 'fp'),
    ).rejects.toThrow(/run await store.migrate/);
    const store = new PostgresStore({ pglite: db });
    await store.migrate();
    await store.migrate();
    await db.exec(`insert into service_pay_inbox (key, fingerprint, payment_id, source, outcome, created_at)
      values ('old', 'fp', 'p_1', 'webhook', 'credited', now() - interval '2 days'),
             ('new', 'fp', 'p_2', 'webhook', 'credited', now())`);
    expect(await store.prune({ olderThanMs: 24 * 3600 * 1000 })).toBe(1);
    expect((await db.query('select key from service_pay_inbox')).rows).toEqual([{ key: 'new' }]);
  });

  it('ctx.tx refuses rollback() and queries once ended; the database stays usable', async () => {
    const store = new PostgresStore({ pglite: db });
    await store.migrate();
    const claim = await store.begin('guard', 'fp');
    if (claim.state !== 'claimed') throw new Error('expected claimed');
    const { tx } = claim.session;
    await expect(tx.rollback()).rejects.toThrow(/throw from onPaymentPaid/);
    expect(tx.closed).toBe(false);
    await claim.session.rollback(new Error('done'));
    expect(tx.closed).toBe(true);
    await expect(tx.query('select 1')).rejects.toThrow(/transaction has ended/);
    expect((await db.query('select 1 as one')).rows).toEqual([{ one: 1 }]);
  });
});

describe('transaction control through ctx.tx', () => {
  it('tells statements that would end the delivery transaction from those that do not', async () => {
    const { endsPostgresTransaction: endsTransaction } = await import('@service-pay/sql/postgres');
    for (const text of [
      'begin',
      ' BEGIN ISOLATION LEVEL SERIALIZABLE',
      'commit',
      'COMMIT PREPARED',
      'end',
      'abort',
      'rollback',
      'ROLLBACK WORK',
      'start transaction',
      'prepare transaction $1',
    ]) {
      expect(endsTransaction(text), text).toBe(true);
    }
    for (const text of [
      'rollback to savepoint s',
      'ROLLBACK TO s',
      'savepoint s',
      'release savepoint s',
      'select 1',
      'update ends set x = 1',
      'beginning',
      undefined,
      42,
    ]) {
      expect(endsTransaction(text), String(text)).toBe(false);
    }
  });

  it('PGlite: BEGIN/COMMIT through ctx.tx are refused; the delivery still commits what the handler wrote', async () => {
    const db = await openPGlite();
    try {
      const store = new PostgresStore({ pglite: db });
      await store.migrate();
      const claim = await store.begin('ctl', 'fp');
      if (claim.state !== 'claimed') throw new Error('expected claimed');
      await expect(claim.session.tx.query('commit')).rejects.toThrow(/already the delivery transaction/);
      await expect(claim.session.tx.exec('begin')).rejects.toThrow(/already the delivery transaction/);
      await claim.session.tx.exec('create table t (x int); insert into t values (1)');
      await claim.session.commit({ outcome: 'credited', paymentId: 'p_1', deliveryId: 'dl_1', source: 'webhook' });
      expect((await db.query('select x from t')).rows).toEqual([{ x: 1 }]);
    } finally {
      await db.close();
    }
  });
});
