import { afterAll, beforeAll } from 'vitest';
import { type SqliteDatabaseLike, SqliteStore } from '../../src/index.js';
import { scratchFolder } from './database.js';

/** What the marks use of a better-sqlite3-compatible connection (better-sqlite3's or libsql's). */
interface Connection extends SqliteDatabaseLike {
  prepare(source: string): { run(...params: unknown[]): unknown; get(...params: unknown[]): unknown };
  close(): unknown;
}

/**
 * One scratch file for the calling `describe`: `db`, the store's connection, with the inbox migrated, and
 * `app`, a second connection for the checks, with a `marks` table (a handler's writes, counted by marker).
 * Read `db` and `app` inside tests: they are opened in `beforeAll` and closed, with the folder, in `afterAll`.
 *
 * @example
 * ```ts
 * const file = marksFile(open);
 * it('...', () => new SqliteStore({ database: file.db }));
 * ```
 */
export function marksFile<D extends Connection>(openFile: (path: string) => D): { db: D; app: D; path: string } {
  const folder = scratchFolder();
  const file = { path: folder.file('shop.db') } as { db: D; app: D; path: string };
  beforeAll(async () => {
    file.db = openFile(file.path);
    file.app = openFile(file.path);
    await new SqliteStore({ database: file.db }).migrate();
    file.app.exec('create table marks (marker text not null)');
  });
  afterAll(() => {
    file.db.close();
    file.app.close();
    folder.remove();
  });
  return file;
}

/** How many marks `marker` left, read on the app's connection. */
export function countMarks(file: { app: Connection }, marker: string): number {
  return (file.app.prepare('select count(*) as n from marks where marker = ?').get(marker) as { n: number }).n;
}
