import { Kysely, type Kysely as KyselyDb, MysqlDialect, sql, type Transaction } from 'kysely';
import mysqlCallback from 'mysql2';
import { KyselyStore } from '../../src/kysely.js';
import { DATABASE_URL } from '../support/database.js';
import { type AppClient, type ClientFixture, type MysqlClient, tables, untyped } from './fixture.js';

interface Marks {
  [table: string]: { id: number; marker: string };
}

const OWN = 'db.transaction()';

/** Kysely on a mysql2 callback pool: `KyselyStore` given the db and the pool under it, `ctx.tx` a `Transaction`. */
async function open(): Promise<ClientFixture<Transaction<Marks>>> {
  const t = await tables('ky');
  const on = (limit: number) => {
    const pool = mysqlCallback.createPool({ uri: DATABASE_URL, connectionLimit: limit });
    return { pool, db: new Kysely<Marks>({ dialect: new MysqlDialect({ pool }) }) };
  };
  const { pool, db } = on(10);
  const insert = (into: KyselyDb<Marks>, marker: string) =>
    into
      .insertInto(t.marks)
      .values({ marker } as never)
      .execute();
  const store = () => new KyselyStore({ db, pool, tableName: t.inbox });
  await store().migrate();
  return {
    name: 'Kysely',
    inbox: t.inbox,
    marks: t.marks,
    store,
    write: async (tx, marker) => {
      await insert(tx, marker);
    },
    slowQuery: (tx, ms) => sql`select sleep(${ms / 1000})`.execute(tx),
    statement: (tx, text) => sql.raw(text).execute(tx),
    writeInOwnTransaction: (marker) =>
      db.transaction().execute(async (own) => {
        await insert(own, marker);
      }),
    count: t.count,
    rows: t.rows,
    guard: {
      lazy: false,
      startWrite: (tx, marker) => insert(tx, marker),
      globalWrite: (marker) => insert(db, marker),
      globalRead: () => db.selectFrom(t.marks).selectAll().limit(1).execute(),
      raw: { dialect: 'mysql', table: t.marks, send: (text) => sql.raw(text).execute(db) },
      ownTransactions: { [OWN]: (marker) => db.transaction().execute((trx) => insert(trx, marker)) },
      poolOfOne: async () => {
        const one = on(1);
        return {
          store: new KyselyStore({ db: one.db, pool: one.pool, tableName: t.inbox }),
          write: (tx, marker) => insert(tx, marker),
          // Through the pool: Kysely's own builder asks for a connection before it says its statement (no
          // public hook before), so on a pool its delivery has exhausted it is refused only once it gets one.
          globalWrite: (marker) => one.pool.promise().query(`insert into ${t.marks} (marker) values (?)`, [marker]),
          close: () => one.db.destroy(),
        };
      },
    },
    close: async () => {
      await db.destroy();
      await t.drop();
    },
  };
}

/** The fault rows' app: `KyselyStore` on a mysql2 callback pool, the credit as Kysely's `sql`. */
function app(databaseUrl: string): AppClient {
  const pool = mysqlCallback.createPool({ uri: databaseUrl, connectionLimit: 20, connectTimeout: 2_000 });
  const db = new Kysely<never>({ dialect: new MysqlDialect({ pool }) });
  type Tx = Transaction<never>;
  return {
    store: new KyselyStore({ db }),
    credit: (tx, id, who) => sql`insert into credits (payment_id, instance) values (${id}, ${who})`.execute(tx as Tx),
    sleepInSql: (tx) => sql`select sleep(30)`.execute(tx as Tx),
    close: () => db.destroy(),
  };
}

export const kysely: MysqlClient = {
  id: 'kysely',
  name: 'KyselyStore',
  open: () => untyped(open()),
  // No poolToFill: a mysql2 pool shows no public count of its connections, so the store cannot name a full
  // pool (the timeout keeps its own message).
  gatedStore: async (tableName, patch) => {
    const pool = mysqlCallback.createPool({ uri: DATABASE_URL, connectionLimit: 6 });
    pool.on('acquire', patch);
    const db = new Kysely<unknown>({ dialect: new MysqlDialect({ pool }) });
    return { store: new KyselyStore({ db, tableName }), close: () => db.destroy() };
  },
  ownTransactions: [OWN],
  app,
};
