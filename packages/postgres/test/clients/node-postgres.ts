import pg from 'pg';
import { PostgresStore } from '../../src/index.js';
import { openPool } from '../support/database.js';
import { type PostgresClient, pgGatedStore, pgOwnTransaction, pgPoolToFill, untyped, withTables } from './fixture.js';

const { Query } = pg;

/** node-postgres: `PostgresStore` on the app's `pg.Pool`, `ctx.tx` a checked-out `PoolClient`. */
export const nodePostgres: PostgresClient = {
  id: 'pg',
  name: 'PostgresStore (node-postgres)',
  ownTransactions: ['pool.connect() + BEGIN'],
  stepwise: ['pool.connect() + BEGIN'],
  apiForms: [
    "pool.connect() then client.query('select credit_fn($1)')",
    'pool.query({ text, values }) of select credit_fn($1)',
    'a submitted Query of select credit_fn($1) on a pool.connect() client',
  ],
  callbackPool: true,
  open: () =>
    untyped(
      withTables<pg.PoolClient>('pg', async (inbox, marks, pool) => {
        const insert = `insert into ${marks} (marker) values ($1)`;
        const ownTransaction = (marker: string) => pgOwnTransaction(pool, marks, marker);
        return {
          name: 'PostgresStore (node-postgres)',
          store: () => new PostgresStore({ pool, tableName: inbox }),
          write: async (tx, marker) => {
            await tx.query(insert, [marker]);
          },
          slowQuery: (tx, ms) => tx.query('select pg_sleep($1)', [ms / 1000]),
          failingQuery: (tx) => tx.query('select 1 / 0'),
          statement: (tx, text) => tx.query(text),
          exec: (tx, text) => tx.query(text),
          writeInOwnTransaction: ownTransaction,
          guard: {
            lazy: false,
            startWrite: (tx, marker) => tx.query(insert, [marker]),
            globalWrite: (marker) => pool.query(insert, [marker]),
            globalRead: () => pool.query(`select * from ${marks} limit 1`),
            raw: { dialect: 'postgres', table: marks, send: (text) => pool.query(text) },
            apiForms: {
              "pool.connect() then client.query('select credit_fn($1)')": async (marker) => {
                const client = await pool.connect();
                try {
                  return await client.query(`select ${marks}_credit($1)`, [marker]);
                } finally {
                  client.release();
                }
              },
              'pool.query({ text, values }) of select credit_fn($1)': (marker) =>
                pool.query({ text: `select ${marks}_credit($1)`, values: [marker] }),
              'a submitted Query of select credit_fn($1) on a pool.connect() client': async (marker) => {
                const client = await pool.connect();
                try {
                  const submitted = client.query(new Query(`select ${marks}_credit($1)`, [marker]));
                  await new Promise<void>((resolve, reject) => {
                    submitted.on('end', () => resolve());
                    submitted.on('error', reject);
                  });
                } finally {
                  client.release();
                }
              },
            },
            callbackPool: async () => {
              const two = await openPool({ max: 2 });
              return {
                store: new PostgresStore({ pool: two, tableName: inbox }),
                write: (tx, marker) => tx.query(insert, [marker]),
                callbackQuery: (text, callback) => void two.query(text, (error: Error) => callback(error)),
                close: () => two.end(),
              };
            },
            ownTransactions: { 'pool.connect() + BEGIN': ownTransaction },
            stepwise: ['pool.connect() + BEGIN'],
            poolOfOne: async () => {
              const one = await openPool({ max: 1 });
              return {
                store: new PostgresStore({ pool: one, tableName: inbox }),
                write: (tx, marker) => tx.query(insert, [marker]),
                globalWrite: (marker) => one.query(insert, [marker]),
                close: () => one.end(),
              };
            },
          },
          close: async () => {}, // the pool is the fixture's
        };
      }),
    ),
  poolToFill: async (tableName) => {
    const one = await openPool({ max: 1 });
    return pgPoolToFill(one, new PostgresStore({ pool: one, tableName }), () => one.end());
  },
  gatedStore: async (tableName, patch) => {
    const pool = await openPool({ max: 6 });
    return pgGatedStore(pool, patch, new PostgresStore({ pool, tableName }), () => pool.end());
  },
  app: (_databaseUrl, pool) => ({
    store: new PostgresStore({ pool }),
    exec: (tx, text, params) => (tx as pg.PoolClient).query(text, params),
    credit: (tx, paymentId, instance) =>
      (tx as pg.PoolClient).query('insert into credits (payment_id, instance) values ($1, $2)', [paymentId, instance]),
    close: async () => {},
  }),
};
