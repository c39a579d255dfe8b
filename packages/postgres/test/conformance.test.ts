// The conformance suites run on every client of the registry (clients.test.ts); here, what is particular to
// one client: node-postgres gives every pool client back, PGlite holds one transaction at a time, and
// postgres.js refuses transaction control through ctx.tx and what is not a postgres.js instance.
import type { PGlite } from '@electric-sql/pglite';
import { type TransactionalWrites, transactionalStoreConformance } from '@service-pay/core/testing';
import type pg from 'pg';
import postgres, { type Sql } from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresStore } from '../src/index.js';
import { PostgresJsStore } from '../src/postgres-js.js';
import { DATABASE_URL, openPGlite, openPool, uniqueName } from './support/database.js';

describe('PostgresStore on PostgreSQL (node-postgres): every pool client given back', () => {
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

describe('PostgresStore on PGlite', () => {
  let db: PGlite;
  beforeAll(async () => {
    db = await openPGlite();
    await new PostgresStore({ pglite: db }).migrate();
  });
  afterAll(() => db.close());

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

describe('PostgresJsStore on PostgreSQL (postgres.js)', () => {
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
