import { type OrmClient, ormStoreSuite } from '@service-pay/sql/testing';
import { Kysely, SqliteDialect, type Transaction } from 'kysely';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { KyselyStore } from '../src/kysely.js';
import { open, scratchFolder } from './support/database.js';

interface Marks {
  marks: { marker: string };
}

/** Kysely's SqliteDialect on a better-sqlite3 file of its own; a second connection reads the marks. */
async function kyselyOnSqlite(): Promise<OrmClient<Transaction<Marks>>> {
  const folder = scratchFolder();
  const file = folder.file('shop.db');
  const reader = open(file);
  reader.exec('create table marks (marker text not null)');
  const db = new Kysely<Marks>({ dialect: new SqliteDialect({ database: open(file) }) });
  const inbox = 'service_pay_inbox';
  const store = () => new KyselyStore({ db, tableName: inbox });
  await store().migrate();
  const rows = async (text: string, params: unknown[] = []) => {
    const statement = reader.prepare(text);
    if (statement.reader) return statement.all(...params) as Array<Record<string, unknown>>;
    statement.run(...params);
    return [];
  };
  return {
    name: 'Kysely (better-sqlite3)',
    inbox,
    store,
    write: async (tx, marker) => {
      await tx.insertInto('marks').values({ marker }).execute();
    },
    writeInOwnTransaction: async (marker) => {
      await db.transaction().execute((tx) => tx.insertInto('marks').values({ marker }).execute());
    },
    count: async (marker) => Number((await rows('select count(*) as n from marks where marker = ?', [marker]))[0]?.n),
    rows,
    close: async () => {
      await db.destroy();
      reader.close();
      folder.remove();
    },
  };
}

describe('KyselyStore on SQLite (better-sqlite3)', () => {
  const suite = ormStoreSuite(kyselyOnSqlite as () => Promise<OrmClient<never>>, {
    param: '?',
    keyColumn: 'key',
    dropClaimSupport: (c) => c.rows(`drop table ${c.inbox}`),
    oneWriter: true,
  });
  beforeAll(suite.open);
  afterAll(suite.close);
  for (const c of suite.cases) it(c.name, c.run);
});
