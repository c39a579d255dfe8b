import { type GuardSubject, namedOwnTransactions, writeGuardCases } from '@service-pay/sql/testing';
import type Database from 'better-sqlite3';
import { Kysely, SqliteDialect, type Transaction } from 'kysely';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { SqliteStore } from '../src/index.js';
import { KyselyStore } from '../src/kysely.js';
import { open, open as openFile, scratchFolder } from './support/database.js';

/**
 * The write guard's cases on SQLite. Here the app's client is the store's own connection, the delivery's
 * transaction open on it: a write sent through it beside `ctx.tx` is not refused but joins that
 * transaction (`joinsDelivery`), so it commits or rolls back with the delivery and still credits once.
 * The own transactions of Kysely are refused as on every other database. Credits are counted on a second
 * connection, in a table without a unique constraint, so a second one would show.
 */
const folder = scratchFolder();
const file = folder.file('shop.db');
let reader: Database.Database;
const closers: Array<() => unknown> = [];

beforeAll(() => {
  reader = open(file);
  reader.exec('create table marks (marker text not null)');
});
afterAll(async () => {
  for (const close of closers) await close();
  reader.close();
  folder.remove();
});

const count = async (marker: string) =>
  (reader.prepare('select count(*) as n from marks where marker = ?').get(marker) as { n: number }).n;

/** `forms`: the own-transaction forms of the client (a better-sqlite3 transaction opened on the delivery's
 * connection is a savepoint inside the delivery's transaction: store.test.ts). */
function run<Tx>(name: string, forms: string[], open: () => Omit<GuardSubject<Tx>, 'count'>) {
  describe(`${name}: a write beside ctx.tx joins the delivery, credited once`, () => {
    let subject: Omit<GuardSubject<Tx>, 'count'>;
    beforeAll(async () => {
      subject = open();
      await (subject.store() as unknown as { migrate(): Promise<void> }).migrate();
    });
    const cases = writeGuardCases<Tx>({
      store: () => subject.store(),
      write: (tx, marker) => subject.write(tx, marker),
      startWrite: (tx, marker) => subject.startWrite(tx, marker),
      lazy: false,
      globalWrite: (marker) => subject.globalWrite(marker),
      globalRead: () => subject.globalRead(),
      ownTransactions: namedOwnTransactions(forms, () => subject.ownTransactions),
      joinsDelivery: true,
      count,
      secondConnectionWrite: async (marker) => {
        // The app's second connection to the same file; a short busy timeout keeps the case quick (the
        // driver's default, 5 s, is waited the same way).
        const second = openFile(file);
        try {
          second.pragma('busy_timeout = 50');
          second.prepare('insert into marks (marker) values (?)').run(marker);
        } finally {
          second.close();
        }
      },
    });
    for (const c of cases) it(c.name, c.run);
  });
}

run<Database.Database>('SqliteStore (better-sqlite3)', [], () => {
  const database = open(file);
  closers.push(() => database.close());
  const insert = (db: Database.Database, marker: string) =>
    db.prepare('insert into marks (marker) values (?)').run(marker);
  return {
    store: () => new SqliteStore({ database }),
    lazy: false,
    write: async (tx, marker) => insert(tx, marker),
    startWrite: (tx, marker) => insert(tx, marker),
    globalWrite: async (marker) => insert(database, marker),
    globalRead: async () => database.prepare('select * from marks limit 1').all(),
    ownTransactions: {},
  };
});

interface Marks {
  marks: { marker: string };
}

run<Transaction<Marks>>('KyselyStore on SQLite (better-sqlite3)', ['db.transaction()', 'db.startTransaction()'], () => {
  const db = new Kysely<Marks>({ dialect: new SqliteDialect({ database: open(file) }) });
  closers.push(() => db.destroy());
  const write = (on: Kysely<Marks>, marker: string) => on.insertInto('marks').values({ marker }).execute();
  return {
    store: () => new KyselyStore({ db }),
    lazy: false,
    write: (tx, marker) => write(tx, marker),
    startWrite: (tx, marker) => write(tx, marker),
    globalWrite: (marker) => write(db, marker),
    globalRead: () => db.selectFrom('marks').selectAll().limit(1).execute(),
    ownTransactions: {
      'db.transaction()': (marker) => db.transaction().execute((trx) => write(trx, marker)),
      'db.startTransaction()': async (marker) => {
        const trx = await db.startTransaction().execute();
        await write(trx, marker);
        await trx.commit().execute();
      },
    },
  };
});
