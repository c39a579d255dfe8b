import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';

/** A folder of its own for one test file's database files, removed by `remove()`. */
export function scratchFolder(): { file: (name: string) => string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'service-pay-sqlite-'));
  return { file: (name) => join(dir, name), remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A connection as an app opens one: WAL, so readers do not wait for the delivery that writes. */
export function open(file: string): Database.Database {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  return db;
}
