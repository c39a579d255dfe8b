import Database from 'better-sqlite3';
import { type SqliteDatabaseLike, SqliteStore } from '../../src/index.js';
import { open as openFile } from '../support/database.js';
import {
  type ClientFixture,
  type Connection,
  type EmptyDatabase,
  marksFile,
  type SqliteClient,
  untyped,
} from './fixture.js';

/**
 * `SqliteStore` on the app's connection (better-sqlite3's, or libsql's, which has its API), `ctx.tx` that
 * connection.
 */
export async function openOn<D extends Connection & SqliteDatabaseLike>(
  name: string,
  openConnection: (path: string) => D,
): Promise<ClientFixture<D>> {
  const t = marksFile(openConnection);
  const database = openConnection(t.path);
  const insert = (db: D, marker: string) => db.prepare('insert into marks (marker) values (?)').run(marker);
  const store = () => new SqliteStore({ database });
  await store().migrate();
  return {
    name,
    inbox: 'service_pay_inbox',
    path: t.path,
    store,
    write: async (tx, marker) => {
      // Awaited: a late call through ctx.tx answers a value that never settles, so the code after a late
      // write does not run as if it had been made (the write guard's late-use case).
      await insert(tx, marker);
    },
    statement: async (tx, text) => tx.prepare(text).run(),
    // The app's own transaction is on a connection of its own: one opened on the delivery's connection is a
    // savepoint inside the delivery's transaction (store.test.ts), not a mistake.
    writeInOwnTransaction: async (marker) => {
      const own = openConnection(t.path);
      try {
        own.pragma('busy_timeout = 50');
        own.exec('begin immediate');
        insert(own, marker);
        own.exec('commit');
      } finally {
        own.close();
      }
    },
    count: t.count,
    rows: t.rows,
    guard: {
      lazy: false,
      joinsDelivery: true,
      startWrite: (tx, marker) => insert(tx, marker),
      globalWrite: async (marker) => insert(database, marker),
      globalRead: async () => database.prepare('select * from marks limit 1').all(),
      ownTransactions: {},
      secondConnectionWrite: t.secondConnectionWrite,
    },
    close: async () => {
      database.close();
      t.remove();
    },
  };
}

/** `SqliteStore` on an empty in-memory database of a driver with better-sqlite3's API (the autoMigrate cases). */
export function emptyOn(database: Connection & SqliteDatabaseLike): EmptyDatabase {
  return {
    store: new SqliteStore({ database }) as EmptyDatabase['store'],
    rows: async (text) => database.prepare(text).all() as Array<Record<string, unknown>>,
    close: async () => {
      database.close();
    },
  };
}

export const betterSqlite3: SqliteClient = {
  id: 'better-sqlite3',
  name: 'SqliteStore (better-sqlite3)',
  open: () => untyped(openOn('SqliteStore (better-sqlite3)', openFile)),
  ownTransactions: [],
  empty: () => emptyOn(new Database(':memory:')),
};
