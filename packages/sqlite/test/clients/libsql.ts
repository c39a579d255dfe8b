import Database from 'libsql';
import { emptyOn, openOn } from './better-sqlite3.js';
import { type SqliteClient, untyped } from './fixture.js';

/**
 * libsql (Turso's `libsql` package: better-sqlite3's synchronous API on local files): `SqliteStore` on it
 * unchanged. (`@libsql/client`, the async and remote client, is another API and is not supported.)
 */
function openFile(path: string): Database.Database {
  const connection = new Database(path);
  connection.pragma('journal_mode = WAL');
  return connection;
}

export const libsql: SqliteClient = {
  id: 'libsql',
  name: 'SqliteStore (libsql)',
  open: () => untyped(openOn('SqliteStore (libsql)', openFile)),
  ownTransactions: [],
  empty: () => emptyOn(new Database(':memory:')),
};
