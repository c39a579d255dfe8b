import { autoMigrateCases, type EmptyDatabaseSubject } from '@service-pay/sql/testing';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { SqliteStore } from '../src/index.js';
import { SQLITE_CLIENTS } from './clients/index.js';

describe('SQLite stores on an empty database', () => {
  const subjects = SQLITE_CLIENTS.map(
    (client) => async (): Promise<EmptyDatabaseSubject> => ({
      name: client.name,
      inbox: 'service_pay_inbox',
      ...client.empty(),
    }),
  );
  // An in-memory database starts empty: nothing to drop.
  for (const c of autoMigrateCases({ keyColumn: 'key', dropInbox: async () => {} }, subjects)) it(c.name, c.run);

  it('with autoMigrate: false, says which store met the missing table and how to create it', async () => {
    const database = new Database(':memory:');
    try {
      await expect(new SqliteStore({ database, autoMigrate: false }).begin('k', 'fp')).rejects.toThrow(
        /^SqliteStore: the inbox table service_pay_inbox does not exist; run await store\.migrate\(\).*autoMigrate/,
      );
    } finally {
      database.close();
    }
  });
});
