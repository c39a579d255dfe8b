import type { EmptyDatabaseSubject, GuardSubject, OrmClient } from '@service-pay/sql/testing';
import { scratchFolder } from '../support/database.js';

/**
 * One client of the app's as every shared case list uses it: a store on the app's client, the credit
 * through `ctx.tx` into a `marks` table WITHOUT a unique constraint (a second credit would show), counted
 * on a connection of the test's own, and what the write guard's cases need beside it.
 */
export type ClientFixture<Tx> = OrmClient<Tx> & {
  /** The database file the fixture's connections share. */
  path: string;
  /** What the write guard's cases need beside the store, the credit and the count (see `GuardSubject`). */
  guard: Omit<GuardSubject<Tx>, 'store' | 'write' | 'count'>;
};

/**
 * A line of the registry (`SQLITE_CLIENTS` in ./index.ts): everything a shared case list needs to run on a
 * client. Adding a client is its file here and one line in the registry.
 */
export interface SqliteClient {
  /** Short and unique, as a file name. */
  readonly id: string;
  /** As test titles name it. */
  readonly name: string;
  /** Opens the fixture on a scratch file of its own. */
  open(): Promise<ClientFixture<never>>;
  /**
   * The names of the fixture's `guard.ownTransactions`: a case list is made before its fixture opens, so
   * the names are given here.
   */
  readonly ownTransactions: readonly string[];
  /** A store on a fresh, empty in-memory database, and a way to read it (autoMigrate's cases). */
  readonly empty: () => EmptyDatabase;
}

/** A store on an in-memory database with no table yet, as autoMigrate's cases take it. */
export type EmptyDatabase = Omit<EmptyDatabaseSubject, 'name' | 'inbox'>;

/** What the fixtures use of a better-sqlite3-compatible connection (better-sqlite3's or libsql's). */
export interface Connection {
  exec(source: string): unknown;
  pragma(source: string, options?: { simple?: boolean }): unknown;
  prepare(source: string): {
    readonly reader: boolean;
    run(...params: unknown[]): unknown;
    all(...params: unknown[]): unknown[];
  };
  close(): unknown;
}

/**
 * A scratch file with its `marks` table, and a connection of the test's own to read it: `count` and `rows`
 * never go through the client under test. `remove` closes the reader and deletes the folder.
 */
export function marksFile(openFile: (path: string) => Connection) {
  const folder = scratchFolder();
  const path = folder.file('shop.db');
  const reader = openFile(path);
  reader.exec('create table marks (marker text not null)');
  const rows = async (text: string, params: unknown[] = []) => {
    const statement = reader.prepare(text);
    if (statement.reader) return statement.all(...params) as Array<Record<string, unknown>>;
    statement.run(...params);
    return [];
  };
  const count = async (marker: string) =>
    Number((await rows('select count(*) as n from marks where marker = ?', [marker]))[0]?.n);
  /** A write through a second connection of the app's to the same file (another connection, as another process). */
  const secondConnectionWrite = async (marker: string) => {
    // A short busy timeout keeps the case quick; the driver's default, 5 s, is waited the same way.
    const second = openFile(path);
    try {
      second.pragma('busy_timeout = 50');
      second.prepare('insert into marks (marker) values (?)').run(marker);
    } finally {
      second.close();
    }
  };
  const remove = () => {
    reader.close();
    folder.remove();
  };
  return { path, rows, count, secondConnectionWrite, remove };
}

/**
 * A fixture typed for its own client, as the registry holds every one: the shared case lists pass its
 * `ctx.tx` only back to its own functions, so its type does not matter there.
 */
export function untyped<Tx>(fixture: Promise<ClientFixture<Tx>>): Promise<ClientFixture<never>> {
  return fixture as unknown as Promise<ClientFixture<never>>;
}
