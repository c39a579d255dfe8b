import type { TransactionalStore, WebhookStore } from '@service-pay/core';
import { type RegisteredClient, type RegisteredFixture, talkAroundTeardown } from '@service-pay/sql/testing';
import type pg from 'pg';
import { openPool, uniqueName } from '../support/database.js';

/** One client of the app's as every shared case list uses it (see `RegisteredFixture`). */
export type ClientFixture<Tx> = RegisteredFixture<Tx> & {
  /** Any statement through `ctx.tx`, as SQL text (the handler tests' commit that fails). */
  exec(tx: Tx, text: string): PromiseLike<unknown>;
};

/**
 * One client as the fault rows' app process uses it (test/fixtures/app.ts): its store on `databaseUrl`,
 * any statement through `ctx.tx` (`$n` placeholders), and the credit into `credits (payment_id, instance)`.
 */
export interface AppClient {
  store: WebhookStore;
  exec(tx: unknown, text: string, params?: unknown[]): Promise<unknown>;
  credit(tx: unknown, paymentId: string, instance: string): Promise<unknown>;
  close(): Promise<unknown>;
}

/**
 * A store of the client's on a pool of ONE connection, and the means to fill that pool as an app that keeps
 * its connections busy does (the pool-full cases: the log must name the pool, size 1, 1 in use).
 */
export interface PoolToFill {
  store: TransactionalStore<unknown>;
  /** Takes every connection of the store's pool (the one), the client's own way; gives a release function. */
  holdPool(): Promise<() => void>;
  /** Every connection is back in the pool, none asked for (the late `begin` rolled back). */
  idle(): boolean;
  close(): Promise<unknown>;
}

/**
 * A store of the client's on a pool of its own (several connections) whose every lent connection went
 * through `patch` first: the duplicate cases hold each ROLLBACK the store sends behind a gate.
 */
export interface GatedStore {
  store: TransactionalStore<unknown> & { migrate(): Promise<void> };
  /** Every connection is back in the pool. */
  idle(): boolean;
  close(): Promise<unknown>;
}

/**
 * A line of the registry (`POSTGRES_CLIENTS` in ./index.ts): everything a shared case list needs to run on
 * a client. Adding a client is its file here and one line in the registry.
 */
export interface PostgresClient extends RegisteredClient<ClientFixture<never>> {
  /**
   * A store on a pool of one connection of this client's, on the inbox `tableName` (already migrated),
   * and how to fill that pool. Left out where the store cannot tell a full pool from a slow database
   * (the client shows no count of its connections), or where there is no pool (PGlite).
   */
  readonly poolToFill?: (tableName: string) => Promise<PoolToFill>;
  /**
   * A store on a pool of this client's whose connections, as lent, go through `patch` (the rollback gate
   * of the duplicate cases), on the inbox `tableName` (not yet migrated). Left out where the client's
   * connections have no `query` to patch.
   */
  readonly gatedStore?: (tableName: string, patch: (connection: object) => void) => Promise<GatedStore>;
  /** The app process of the fault rows on this client; none for a database inside the process. */
  readonly app?: (databaseUrl: string, pool: pg.Pool) => AppClient | Promise<AppClient>;
  /** The fault rows' apps may die on a crash (a driver's own uncatchable error); nothing may be lost. */
  readonly appsMayDie?: boolean;
}

type Finished<Tx> = Omit<ClientFixture<Tx>, 'inbox' | 'marks' | 'count' | 'rows'> & { marksTable?: string };

/**
 * Makes fresh inbox and marks tables on the shared server (the marks table through a pool of the test's
 * own, which also counts and reads), lets `finish` build the client around them, and migrates its store.
 * Closing closes the client, drops both tables and ends the pool.
 */
export async function withTables<Tx>(
  label: string,
  finish: (inbox: string, marks: string, pool: pg.Pool) => Promise<Finished<Tx>>,
): Promise<ClientFixture<Tx>> {
  const pool = await openPool();
  const inbox = uniqueName(`${label}_inbox`);
  const marks = uniqueName(`${label}_marks`);
  await pool.query(`create table ${marks} (id serial primary key, marker text not null)`);
  const client = await finish(inbox, marks, pool);
  await client.store().migrate();
  const table = client.marksTable ?? marks;
  return {
    ...client,
    inbox,
    marks: table,
    count: async (marker) =>
      Number((await pool.query(`select count(*)::int as n from ${table} where marker = $1`, [marker])).rows[0].n),
    rows: async (text, params) => (await pool.query(text, params)).rows,
    close: async () => {
      await client.close();
      await pool.query(`drop table if exists ${marks}, ${inbox} cascade`);
      await pool.query(`drop function if exists ${inbox}_claim, ${inbox}_take_v2`);
      for (const statement of talkAroundTeardown('postgres', marks)) await pool.query(statement);
      await pool.end();
    },
  };
}

/** The app's own transaction on a node-postgres pool: a checked-out client, BEGIN, the mark, COMMIT. */
export async function pgOwnTransaction(pool: pg.Pool, marks: string, marker: string): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query(`insert into ${marks} (marker) values ($1)`, [marker]);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}

/** `text` with `$n` placeholders split into literal parts and parameter numbers (odd indexes). */
export const placeholders = (text: string): string[] => text.split(/\$(\d+)/);

/**
 * A fixture typed for its own client, as the registry holds every one: the shared case lists pass its
 * `ctx.tx` only back to its own functions, so its type does not matter there.
 */
export function untyped<Tx>(fixture: ClientFixture<Tx>): ClientFixture<never>;
export function untyped<Tx>(fixture: Promise<ClientFixture<Tx>>): Promise<ClientFixture<never>>;
export function untyped(fixture: unknown): unknown {
  return fixture;
}

/** A node-postgres pool as far as filling it needs (pg-promise's `db.$pool` is typed only this far). */
type PgPoolCounts = Pick<pg.Pool, 'idleCount' | 'totalCount' | 'waitingCount'> & {
  connect(): Promise<{ release(): void }>;
};

/**
 * `PoolToFill` of a store on a node-postgres pool of one (the pool of the app's or of its ORM's driver):
 * the app holds the pool's connection checked out.
 */
export function pgPoolToFill(
  pool: PgPoolCounts,
  store: TransactionalStore<unknown>,
  close: () => Promise<unknown>,
): PoolToFill {
  return {
    store,
    holdPool: async () => {
      const client = await pool.connect();
      return () => client.release();
    },
    idle: () => pool.idleCount === pool.totalCount && pool.waitingCount === 0,
    close,
  };
}

/** `GatedStore` of a store on a node-postgres pool (of the app's or of its ORM's driver): patched as lent. */
export function pgGatedStore(
  pool: Pick<pg.Pool, 'idleCount' | 'totalCount'> & {
    on(event: 'acquire', listener: (client: object) => void): unknown;
  },
  patch: (connection: object) => void,
  store: GatedStore['store'],
  close: () => Promise<unknown>,
): GatedStore {
  pool.on('acquire', patch);
  return { store, idle: () => pool.idleCount === pool.totalCount, close };
}
