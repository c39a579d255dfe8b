import { autoMigrateCases, type EmptyDatabaseSubject } from '@service-pay/sql/testing';
import Database from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { describe, expect, it } from 'vitest';
import { SqliteStore } from '../src/index.js';
import { KyselyStore } from '../src/kysely.js';

function subject(name: string, store: (database: Database.Database) => EmptyDatabaseSubject['store']) {
  return async (): Promise<EmptyDatabaseSubject> => {
    const database = new Database(':memory:');
    return {
      name,
      inbox: 'service_pay_inbox',
      store: store(database),
      rows: async (text) => database.prepare(text).all() as Array<Record<string, unknown>>,
      close: async () => {
        database.close();
      },
    };
  };
}

describe('SQLite stores on an empty database', () => {
  const subjects = [
    subject('SqliteStore', (database) => new SqliteStore({ database }) as EmptyDatabaseSubject['store']),
    subject(
      'KyselyStore',
      (database) => new KyselyStore({ db: new Kysely({ dialect: new SqliteDialect({ database }) }) }),
    ),
  ];
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
