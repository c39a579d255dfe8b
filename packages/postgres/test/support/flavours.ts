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

export async function postgresFlavour(): Promise<Flavour<pg.PoolClient>> {
  const pool = await openPool();
  const inbox = uniqueName('inbox');
  const credits = uniqueName('credits');
  const store = new PostgresStore({ pool, tableName: inbox });
  await store.migrate();
  await pool.query(`create table ${credits} (payment_id text not null, at timestamptz not null default now())`);
  return {
    name: 'PostgreSQL',
    store,
    inbox,
    credits,
    credit: async (tx, paymentId) => {
      await tx.query(`insert into ${credits} (payment_id) values ($1)`, [paymentId]);
    },
    exec: (tx, sql, params) => tx.query(sql, params),
    sleepIn: (tx, ms) => tx.query('select pg_sleep($1)', [ms / 1000]),
    rows: async (sql, params) => (await pool.query(sql, params)).rows,
    close: async () => {
      await pool.query(`drop table if exists ${credits}, ${inbox} cascade`);
      await pool.end();
    },
  };
}

export async function pgliteFlavour(): Promise<Flavour<PGliteTransaction> & { db: PGlite }> {
  const db = await openPGlite();
  const inbox = 'service_pay_inbox';
  const credits = 'credits';
  const store = new PostgresStore({ pglite: db });
  await store.migrate();
  await db.exec(`create table ${credits} (payment_id text not null, at timestamptz not null default now())`);
  return {
    name: 'PGlite',
    db,
    store,
    inbox,
    credits,
    credit: async (tx, paymentId) => {
      await tx.query(`insert into ${credits} (payment_id) values ($1)`, [paymentId]);
    },
    exec: (tx, sql, params) => tx.query(sql, params),
    rows: async <R>(sql: string, params?: unknown[]) => (await db.query<R>(sql, params)).rows,
    close: () => db.close(),
  };
}

/** postgres.js: `PostgresJsStore`, `ctx.tx` a `TransactionSql`; the checks read through a pg pool. */
export async function postgresJsFlavour(): Promise<Flavour<TransactionSql>> {
  const pool = await openPool();
  const sql = postgres(DATABASE_URL, { max: 25, onnotice: () => {} });
  const inbox = uniqueName('inbox');
  const credits = uniqueName('credits');
  const store = new PostgresJsStore({ sql, tableName: inbox });
  await store.migrate();
  await pool.query(`create table ${credits} (payment_id text not null, at timestamptz not null default now())`);
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
    rows: async (text, params) => (await pool.query(text, params)).rows,
    close: async () => {
      await pool.query(`drop table if exists ${credits}, ${inbox} cascade`);
      await sql.end({ timeout: 5 });
      await pool.end();
    },
  };
}
