import type { TransactionalStore } from '@service-pay/core';
import mysqlCallbacks from 'mysql2';
import mysql from 'mysql2/promise';
import { MySqlStore } from '../../src/index.js';
import { DATABASE_URL, openPool } from '../support/database.js';
import { type AppClient, type ClientFixture, type MysqlClient, tables, untyped } from './fixture.js';

const OWN = 'pool.getConnection() + beginTransaction()';
const API_FORMS = [
  'pool.execute(/*! insert */)',
  'pool.execute(select credit_fn(?))',
  'conn.query({ sql: select credit_fn(?) })',
  'getConnection() + conn.prepare(insert) + stmt.execute()',
  'getConnection() + conn.prepare(select credit_fn(?)) + stmt.execute()',
] as const;

/** A mysql2 checked-out connection's prepared statement of `text`, executed with `marker`. */
async function prepared(pool: mysql.Pool, text: string, marker: string): Promise<unknown> {
  const connection = await pool.getConnection();
  try {
    const statement = await connection.prepare(text);
    try {
      return await statement.execute([marker]);
    } finally {
      await statement.close();
    }
  } finally {
    connection.release();
  }
}

/** mysql2: `MySqlStore` on the app's promise pool, `ctx.tx` a `PoolConnection`. */
async function open(): Promise<ClientFixture<mysql.PoolConnection>> {
  const t = await tables('m2');
  const pool = await openPool({ connectionLimit: 10 });
  const marks = t.marks;
  const insert = `insert into ${marks} (marker) values (?)`;
  const store = () => new MySqlStore({ pool, tableName: t.inbox });
  await store().migrate();
  const writeInOwnTransaction = async (marker: string) => {
    const connection = await pool.getConnection();
    try {
      await connection.beginTransaction();
      await connection.query(insert, [marker]);
      await connection.commit();
    } finally {
      connection.release();
    }
  };
  return {
    name: 'mysql2',
    inbox: t.inbox,
    marks,
    store,
    write: async (tx, marker) => {
      await tx.query(insert, [marker]);
    },
    slowQuery: (tx, ms) => tx.query('select sleep(?)', [ms / 1000]),
    statement: (tx, text) => tx.query(text),
    writeInOwnTransaction,
    count: t.count,
    rows: t.rows,
    guard: {
      lazy: false,
      startWrite: (tx, marker) => tx.query(insert, [marker]),
      globalWrite: (marker) => pool.query(insert, [marker]),
      globalRead: () => pool.query(`select * from ${marks} limit 1`),
      raw: { dialect: 'mysql', table: marks, send: (text) => pool.query(text) },
      apiForms: {
        'pool.execute(/*! insert */)': (marker) =>
          pool.execute(`/*! insert into ${marks} (marker) values (?) */`, [marker]),
        'pool.execute(select credit_fn(?))': (marker) => pool.execute(`select ${marks}_credit(?)`, [marker]),
        'conn.query({ sql: select credit_fn(?) })': async (marker) => {
          const connection = await pool.getConnection();
          try {
            return await connection.query({ sql: `select ${marks}_credit(?)`, values: [marker] });
          } finally {
            connection.release();
          }
        },
        'getConnection() + conn.prepare(insert) + stmt.execute()': (marker) => prepared(pool, insert, marker),
        'getConnection() + conn.prepare(select credit_fn(?)) + stmt.execute()': (marker) =>
          prepared(pool, `select ${marks}_credit(?)`, marker),
      },
      callbackPool: async () => {
        const two = await openPool({ connectionLimit: 2 });
        return {
          store: new MySqlStore({ pool: two, tableName: t.inbox }) as TransactionalStore<mysql.PoolConnection>,
          write: (tx, marker) => tx.query(insert, [marker]),
          callbackQuery: (text, callback) => void two.pool.query(text, (error: unknown) => callback(error)),
          close: () => two.end(),
        };
      },
      ownTransactions: { [OWN]: writeInOwnTransaction },
      poolOfOne: async () => {
        const one = await openPool({ connectionLimit: 1 });
        return {
          store: new MySqlStore({ pool: one, tableName: t.inbox }) as TransactionalStore<mysql.PoolConnection>,
          write: (tx, marker) => tx.query(insert, [marker]),
          globalWrite: (marker) => one.query(insert, [marker]),
          close: () => one.end(),
        };
      },
    },
    close: async () => {
      await pool.end();
      await t.drop();
    },
  };
}

/** The fault rows' app: `MySqlStore` on a mysql2 promise pool, the credit with `ctx.tx.query`. */
function app(databaseUrl: string): AppClient {
  const pool = mysql.createPool({ uri: databaseUrl, connectionLimit: 20, connectTimeout: 2_000 });
  type Tx = mysql.PoolConnection;
  return {
    store: new MySqlStore({ pool }),
    credit: (tx, id, who) => (tx as Tx).query('insert into credits (payment_id, instance) values (?, ?)', [id, who]),
    sleepInSql: (tx) => (tx as Tx).query('select sleep(30)'),
    close: () => pool.end(),
  };
}

export const mysql2: MysqlClient = {
  id: 'mysql2',
  name: 'MySqlStore (mysql2)',
  open: () => untyped(open()),
  // No poolToFill: a mysql2 pool shows no public count of its connections, so the store cannot name a full
  // pool (the timeout keeps its own message).
  gatedStore: async (tableName, patch) => {
    const pool = mysqlCallbacks.createPool({ uri: DATABASE_URL, connectionLimit: 6 });
    pool.on('acquire', patch);
    return {
      store: new MySqlStore({ pool: pool.promise(), tableName }),
      close: () => new Promise((resolve) => pool.end(resolve)),
    };
  },
  ownTransactions: [OWN],
  stepwise: [OWN],
  apiForms: API_FORMS,
  callbackPool: true,
  app,
};
