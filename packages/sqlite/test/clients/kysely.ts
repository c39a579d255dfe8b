import Database from 'better-sqlite3';
import { Kysely, type Kysely as KyselyDb, SqliteDialect, type Transaction } from 'kysely';
import { KyselyStore } from '../../src/kysely.js';
import { open as openFile } from '../support/database.js';
import { type ClientFixture, marksFile, type SqliteClient, untyped } from './fixture.js';

interface Marks {
  marks: { marker: string };
}

const OWN = ['db.transaction()', 'db.startTransaction()'] as const;

/** Kysely's SqliteDialect on a better-sqlite3 connection: `KyselyStore` on the app's db, `ctx.tx` a `Transaction`. */
async function open(): Promise<ClientFixture<Transaction<Marks>>> {
  const t = marksFile(openFile);
  const db = new Kysely<Marks>({ dialect: new SqliteDialect({ database: openFile(t.path) }) });
  const insert = (into: KyselyDb<Marks>, marker: string) => into.insertInto('marks').values({ marker }).execute();
  const inbox = 'service_pay_inbox';
  const store = () => new KyselyStore({ db, tableName: inbox });
  await store().migrate();
  return {
    name: 'Kysely (better-sqlite3)',
    inbox,
    path: t.path,
    store,
    write: async (tx, marker) => {
      await insert(tx, marker);
    },
    writeInOwnTransaction: async (marker) => {
      await db.transaction().execute((tx) => insert(tx, marker));
    },
    count: t.count,
    rows: t.rows,
    guard: {
      lazy: false,
      joinsDelivery: true,
      startWrite: (tx, marker) => insert(tx, marker),
      globalWrite: (marker) => insert(db, marker),
      globalRead: () => db.selectFrom('marks').selectAll().limit(1).execute(),
      ownTransactions: {
        'db.transaction()': (marker) => db.transaction().execute((trx) => insert(trx, marker)),
        'db.startTransaction()': async (marker) => {
          const trx = await db.startTransaction().execute();
          await insert(trx, marker);
          await trx.commit().execute();
        },
      },
      secondConnectionWrite: t.secondConnectionWrite,
    },
    close: async () => {
      await db.destroy();
      t.remove();
    },
  };
}

export const kysely: SqliteClient = {
  id: 'kysely',
  name: 'KyselyStore (better-sqlite3)',
  open: () => untyped(open()),
  ownTransactions: OWN,
  empty: () => {
    const database = new Database(':memory:');
    return {
      store: new KyselyStore({ db: new Kysely({ dialect: new SqliteDialect({ database }) }) }),
      rows: async (text) => database.prepare(text).all() as Array<Record<string, unknown>>,
      close: async () => {
        database.close();
      },
    };
  },
};
