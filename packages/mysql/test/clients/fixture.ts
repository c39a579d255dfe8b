import type { TransactionalStore, WebhookStore } from '@service-pay/core';
import { type RegisteredClient, type RegisteredFixture, talkAroundTeardown } from '@service-pay/sql/testing';
import { openPool, uniqueName } from '../support/database.js';

/** One client of the app's as every shared case list uses it (see `RegisteredFixture`). */
export type ClientFixture<Tx> = RegisteredFixture<Tx>;

/**
 * One client as the fault rows' app process uses it (test/fixtures/app.ts): its store on `databaseUrl`,
 * the credit into `credits (payment_id, instance)` and a `SLEEP(30)` through `ctx.tx`, with the client's
 * own API.
 */
export interface AppClient {
  store: WebhookStore;
  credit(tx: unknown, paymentId: string, instance: string): Promise<unknown>;
  sleepInSql(tx: unknown): Promise<unknown>;
  close(): Promise<unknown>;
}

/**
 * A store of the client's on a pool of ONE connection, and the means to fill that pool as an app that keeps
 * its connections busy does (the pool-full case: the log must name the pool, size 1, 1 in use).
 */
export interface PoolToFill {
  store: TransactionalStore<unknown> & { migrate(): Promise<void> };
  /** Takes every connection of the store's pool (the one), the client's own way; gives a release function. */
  holdPool(): Promise<() => Promise<unknown>>;
  /** No connection in use or asked for (the late `begin` rolled back). */
  idle(): boolean;
  close(): Promise<unknown>;
}

/**
 * A store of the client's on a pool of its own (several connections) whose every lent connection went
 * through `patch` first: the duplicate cases hold each ROLLBACK the store sends behind a gate.
 */
export interface GatedStore {
  store: TransactionalStore<unknown> & { migrate(): Promise<void> };
  close(): Promise<unknown>;
}

/**
 * A line of the registry (`MYSQL_CLIENTS` in ./index.ts): everything a shared case list needs to run on a
 * client. Adding a client is its file here and one line in the registry.
 */
export interface MysqlClient extends RegisteredClient<ClientFixture<never>> {
  /** The app process of the fault rows on this client (test/faults/faults.test.ts runs them on it). */
  readonly app?: (databaseUrl: string) => AppClient | Promise<AppClient>;
  /** The fault rows' apps may die on a crash (a driver's own uncatchable error); nothing may be lost. */
  readonly appsMayDie?: boolean;
  /**
   * A store on a pool of one connection of this client's, on the inbox `tableName` (not yet migrated), and
   * how to fill that pool. Left out where the store cannot tell a full pool from a slow database (the
   * client's pool shows no count of its connections).
   */
  readonly poolToFill?: (tableName: string) => Promise<PoolToFill>;
  /**
   * A store on a pool of this client's whose connections, as lent, go through `patch` (the rollback gate of
   * the duplicate cases), on the inbox `tableName` (not yet migrated). Left out where the client's
   * ROLLBACK does not go through a connection's `query`.
   */
  readonly gatedStore?: (tableName: string, patch: (connection: object) => void) => Promise<GatedStore>;
}

/**
 * The inbox and marks tables, and a pool of the test's own to read them with. `fixedMarks`: a marks table
 * named by the client's schema (Prisma's), shared by runs and by test files running at once; markers are
 * unique per test. `drop` removes the tables and what the write guard's talk-around cases made beside the
 * marks table, a shared one's apart.
 */
export async function tables(label: string, fixedMarks?: string) {
  const inbox = uniqueName(`${label}_inbox`);
  const marks = fixedMarks ?? uniqueName(`${label}_marks`);
  const admin = await openPool({ connectionLimit: 2 });
  await admin.query(
    `create table if not exists ${marks} (id bigint auto_increment primary key, marker varchar(255) not null)`,
  );
  const rows = async (text: string, params: unknown[] = []) =>
    (await admin.query(text, params))[0] as Array<Record<string, unknown>>;
  const count = async (marker: string) =>
    Number((await rows(`select count(*) as n from ${marks} where marker = ?`, [marker]))[0]?.n);
  const drop = async () => {
    await admin.query(`drop table if exists ${fixedMarks ? '' : `${marks}, `}${inbox}, ${inbox}_keys`);
    // A shared marks table keeps its routines too: another file's talk-around cases may be calling them.
    if (!fixedMarks) for (const statement of talkAroundTeardown('mysql', marks)) await admin.query(statement);
    await admin.end();
  };
  return { inbox, marks, rows, count, drop };
}

/**
 * A fixture typed for its own client, as the registry holds every one: the shared case lists pass its
 * `ctx.tx` only back to its own functions, so its type does not matter there.
 */
export function untyped<Tx>(fixture: Promise<ClientFixture<Tx>>): Promise<ClientFixture<never>> {
  return fixture as unknown as Promise<ClientFixture<never>>;
}
