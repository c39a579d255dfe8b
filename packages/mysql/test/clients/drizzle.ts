import { sql as drizzleSql } from 'drizzle-orm';
import { bigint, mysqlTable, varchar } from 'drizzle-orm/mysql-core';
import { drizzle as drizzleOf } from 'drizzle-orm/mysql2';
import mysqlCallback from 'mysql2';
import { DrizzleStore } from '../../src/drizzle.js';
import { DATABASE_URL } from '../support/database.js';
import { type AppClient, type ClientFixture, type MysqlClient, tables, untyped } from './fixture.js';

const OWN = 'db.transaction()';

function drizzleOn(limit: number) {
  const pool = mysqlCallback.createPool({ uri: DATABASE_URL, connectionLimit: limit });
  return { pool, db: drizzleOf({ client: pool }) };
}
type DrizzleDb = ReturnType<typeof drizzleOn>['db'];
type DrizzleTx = Parameters<Parameters<DrizzleDb['transaction']>[0]>[0];

const end = (pool: mysqlCallback.Pool) => new Promise<void>((resolve) => pool.end(() => resolve()));

/** Drizzle on a mysql2 callback pool: `DrizzleStore` on the app's db, `ctx.tx` its transaction. */
async function open(): Promise<ClientFixture<DrizzleTx>> {
  const t = await tables('dz');
  const { pool, db } = drizzleOn(10);
  const marks = mysqlTable(t.marks, {
    id: bigint('id', { mode: 'number' }).primaryKey().autoincrement(),
    marker: varchar('marker', { length: 255 }).notNull(),
  });
  const store = () => new DrizzleStore({ db, tableName: t.inbox });
  await store().migrate();
  return {
    name: 'Drizzle',
    inbox: t.inbox,
    marks: t.marks,
    store,
    write: async (tx, marker) => {
      await tx.insert(marks).values({ marker });
    },
    slowQuery: (tx, ms) => tx.execute(drizzleSql`select sleep(${ms / 1000})`),
    statement: (tx, text) => tx.execute(drizzleSql.raw(text)),
    writeInOwnTransaction: (marker) =>
      db.transaction(async (own) => {
        await own.insert(marks).values({ marker });
      }),
    count: t.count,
    rows: t.rows,
    guard: {
      lazy: true,
      startWrite: (tx, marker) => tx.insert(marks).values({ marker }),
      globalWrite: (marker) => db.insert(marks).values({ marker }),
      globalRead: () => db.select().from(marks).limit(1),
      raw: { dialect: 'mysql', table: t.marks, send: (text) => db.execute(drizzleSql.raw(text)) },
      ownTransactions: {
        [OWN]: (marker) =>
          db.transaction(async (trx) => {
            await trx.insert(marks).values({ marker });
          }),
      },
      poolOfOne: async () => {
        const one = drizzleOn(1);
        return {
          store: new DrizzleStore({ db: one.db, tableName: t.inbox }),
          write: async (tx, marker) => await tx.insert(marks).values({ marker }),
          globalWrite: (marker) => one.db.insert(marks).values({ marker }),
          close: () => end(one.pool),
        };
      },
    },
    close: async () => {
      await end(pool);
      await t.drop();
    },
  };
}

/** The fault rows' app: `DrizzleStore` on a mysql2 callback pool, the credit as Drizzle's `sql`. */
function app(databaseUrl: string): AppClient {
  const pool = mysqlCallback.createPool({ uri: databaseUrl, connectionLimit: 20, connectTimeout: 2_000 });
  const db = drizzleOf({ client: pool });
  type Tx = Parameters<Parameters<typeof db.transaction>[0]>[0];
  return {
    store: new DrizzleStore({ db }),
    credit: (tx, id, who) =>
      (tx as Tx).execute(drizzleSql`insert into credits (payment_id, instance) values (${id}, ${who})`),
    sleepInSql: (tx) => (tx as Tx).execute(drizzleSql`select sleep(30)`),
    close: () => end(pool),
  };
}

export const drizzle: MysqlClient = {
  id: 'drizzle',
  name: 'DrizzleStore (mysql2)',
  open: () => untyped(open()),
  // No poolToFill: a mysql2 pool shows no public count of its connections, so the store cannot name a full
  // pool (the timeout keeps its own message).
  gatedStore: async (tableName, patch) => {
    const { pool, db } = drizzleOn(6);
    pool.on('acquire', patch);
    return { store: new DrizzleStore({ db, tableName }), close: () => end(pool) };
  },
  ownTransactions: [OWN],
  app,
};
