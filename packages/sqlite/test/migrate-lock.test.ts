import { afterAll, expect, it } from 'vitest';
import { SqliteStore } from '../src/index.js';
import { open, scratchFolder } from './support/database.js';

// Several app processes starting together each call `await store.migrate()` on one database file. A
// delivery takes SQLite's write lock without waiting (another answers 409 at once), but migrate must wait
// its turn: failing with SQLITE_BUSY there, an app would not start. Here another connection, as another
// process would, holds the write lock while the store migrates, then lets it go.
const folder = scratchFolder();
afterAll(() => folder.remove());

it('migrate waits for the write lock another connection holds, then creates the inbox', async () => {
  const file = folder.file('shop.db');
  const other = open(file);
  const storeDb = open(file);
  try {
    other.exec('BEGIN IMMEDIATE');
    const migrated = new SqliteStore({ database: storeDb }).migrate().then(() => 'migrated');
    const first = await Promise.race([migrated, new Promise((resolve) => setTimeout(resolve, 150, 'waiting'))]);
    expect(first).toBe('waiting'); // not failed at once with SQLITE_BUSY
    other.exec('COMMIT');
    expect(await migrated).toBe('migrated');
    const table = other
      .prepare("select name from sqlite_master where type = 'table' and name = ?")
      .get('service_pay_inbox');
    expect(table).toEqual({ name: 'service_pay_inbox' });
  } finally {
    other.close();
    storeDb.close();
  }
});
