import type { PGlite } from '@electric-sql/pglite';
import type pg from 'pg';
import postgres, { type TransactionSql } from 'postgres';
import { type PGliteTransaction, PostgresStore } from '../../src/index.js';
import { PostgresJsStore } from '../../src/postgres-js.js';
import { DATABASE_URL, openPGlite, openPool, uniqueName } from './database.js';

/**
 * One database flavour as the handler tests use it: a store, a credits table WITHOUT a unique constraint
 * (a second credit would show), and plain SQL outside any delivery transaction.
 */
export interface Flavour<Tx> {
  name: string;
  store: PostgresStore<Tx>;
  inbox: string;
  credits: string;
  /** Writes one credit through the delivery's transaction. */
  credit(tx: Tx, paymentId: string): Promise<void>;
  /** Any statement through the delivery's transaction. */
  exec(tx: Tx, sql: string, params?: unknown[]): Promise<unknown>;
  /** A statement through `tx` that runs for `ms` (PostgreSQL only: PGlite cannot be interrupted). */
  sleepIn?(tx: Tx, ms: number): Promise<unknown>;
  /** Rows of a query run outside any delivery transaction. */
  rows<R>(sql: string, params?: unknown[]): Promise<R[]>;
  close(): Promise<void>;
}

/** The store migrated, and the credits table created, by `exec` outside any delivery. */
async function ready(store: { migrate(): Promise<void> }, credits: string, exec: (sql: string) => Promise<unknown>) {
  await store.migrate();
  await exec(`create table ${credits} (payment_id text not null, at timestamptz not null default now())`);
}

/** A pool of the test's own, fresh table names, its reads, and the drop of both tables. */
async function pooled() {
  const pool = await openPool();
  const inbox = uniqueName('inbox');
  const credits = uniqueName('credits');
  return {
    pool,
    inbox,
    credits,
    rows: async <R>(sql: string, params?: unknown[]) => (await pool.query(sql, params)).rows as R[],
    drop: () => pool.query(`drop table if exists ${credits}, ${inbox} cascade`),
  };
}

/** The credit and any statement, for a client whose transaction has `query(sql, params)`. */
function queryTx<Tx extends { query(sql: string, params?: unknown[]): Promise<unknown> }>(credits: string) {
  return {
    credit: async (tx: Tx, paymentId: string) => {
      await tx.query(`insert into ${credits} (payment_id) values ($1)`, [paymentId]);
    },
    exec: (tx: Tx, sql: string, params?: unknown[]) => tx.query(sql, params),
  };
}

export async function postgresFlavour(): Promise<Flavour<pg.PoolClient>> {
  const { pool, inbox, credits, rows, drop } = await pooled();
  const store = new PostgresStore({ pool, tableName: inbox });
  await ready(store, credits, (sql) => pool.query(sql));
  return {
    name: 'PostgreSQL',
    store,
    inbox,
    credits,
    ...queryTx<pg.PoolClient>(credits),
    sleepIn: (tx, ms) => tx.query('select pg_sleep($1)', [ms / 1000]),
    rows,
    close: async () => {
      await drop();
      await pool.end();
    },
  };
}

export async function pgliteFlavour(): Promise<Flavour<PGliteTransaction> & { db: PGlite }> {
  const db = await openPGlite();
  const credits = 'credits';
  const store = new PostgresStore({ pglite: db });
  await ready(store, credits, (sql) => db.exec(sql));
  return {
    name: 'PGlite',
    db,
    store,
    inbox: 'service_pay_inbox',
    credits,
    ...queryTx<PGliteTransaction>(credits),
    rows: async <R>(sql: string, params?: unknown[]) => (await db.query<R>(sql, params)).rows,
    close: () => db.close(),
  };
}

/** postgres.js: `PostgresJsStore`, `ctx.tx` a `TransactionSql`; the checks read through a pg pool. */
export async function postgresJsFlavour(): Promise<Flavour<TransactionSql>> {
  const { pool, inbox, credits, rows, drop } = await pooled();
  const sql = postgres(DATABASE_URL, { max: 25, onnotice: () => {} });
  const store = new PostgresJsStore({ sql, tableName: inbox });
  await ready(store, credits, (text) => pool.query(text));
  return {
    name: 'postgres.js',
    store: store as unknown as PostgresStore<TransactionSql>,
    inbox,
    credits,
    credit: async (tx, paymentId) => {
      await tx`insert into ${tx(credits)} (payment_id) values (${paymentId})`;
    },
    exec: (tx, text, params) => tx.unsafe(text, params as never[]),
    sleepIn: (tx, ms) => tx`select pg_sleep(${ms / 1000})`,
    rows,
    close: async () => {
      await drop();
      await sql.end({ timeout: 5 });
      await pool.end();
    },
  };
}
