import knexFactory, { type Knex } from 'knex';
import { KnexStore } from '../../src/knex.js';
import { DATABASE_URL } from '../support/database.js';
import { type AppClient, type ClientFixture, type MysqlClient, tables, untyped } from './fixture.js';

const OWN = ['knex.transaction()', 'knex.transactionProvider()'] as const;

/** Knex on mysql2: `KnexStore` on the app's `knex`, `ctx.tx` a `Knex.Transaction`. */
async function open(): Promise<ClientFixture<Knex.Transaction>> {
  const t = await tables('kx');
  const on = (max: number) => knexFactory({ client: 'mysql2', connection: DATABASE_URL, pool: { min: 0, max } });
  const knex = on(10);
  const store = () => new KnexStore({ knex, tableName: t.inbox });
  await store().migrate();
  const writeInOwnTransaction = (marker: string) =>
    knex.transaction(async (own) => {
      await own(t.marks).insert({ marker });
    });
  return {
    name: 'Knex',
    inbox: t.inbox,
    marks: t.marks,
    store,
    write: async (tx, marker) => {
      await tx(t.marks).insert({ marker });
    },
    slowQuery: (tx, ms) => tx.raw('select sleep(?)', [ms / 1000]),
    statement: (tx, text) => tx.raw(text),
    writeInOwnTransaction,
    count: t.count,
    rows: t.rows,
    guard: {
      lazy: true,
      startWrite: (tx, marker) => tx(t.marks).insert({ marker }),
      globalWrite: (marker) => knex(t.marks).insert({ marker }),
      globalRead: () => knex(t.marks).select('marker').limit(1),
      raw: { dialect: 'mysql', table: t.marks, send: (text) => knex.raw(text) },
      ownTransactions: {
        'knex.transaction()': writeInOwnTransaction,
        'knex.transactionProvider()': async (marker) => {
          const trx = await knex.transactionProvider()();
          await trx(t.marks).insert({ marker });
          await trx.commit();
        },
      },
      poolOfOne: async () => {
        const one = on(1);
        return {
          store: new KnexStore({ knex: one, tableName: t.inbox }),
          write: async (tx, marker) => await tx(t.marks).insert({ marker }),
          globalWrite: (marker) => one(t.marks).insert({ marker }),
          close: () => one.destroy(),
        };
      },
    },
    close: async () => {
      await knex.destroy();
      await t.drop();
    },
  };
}

/** The fault rows' app: `KnexStore` on a `knex` of its own, the credit with Knex's builder through `ctx.tx`. */
function app(databaseUrl: string): AppClient {
  const knex = knexFactory({
    client: 'mysql2',
    connection: { uri: databaseUrl, connectTimeout: 2_000 } as never,
    pool: { min: 0, max: 20 },
  });
  return {
    store: new KnexStore({ knex }),
    credit: async (tx, id, who) => await (tx as Knex.Transaction)('credits').insert({ payment_id: id, instance: who }),
    sleepInSql: async (tx) => await (tx as Knex.Transaction).raw('select sleep(30)'),
    close: () => knex.destroy(),
  };
}

export const knex: MysqlClient = {
  id: 'knex',
  name: 'KnexStore',
  open: () => untyped(open()),
  poolToFill: async (tableName) => {
    const one = knexFactory({ client: 'mysql2', connection: DATABASE_URL, pool: { min: 0, max: 1 } });
    const tarn = (one.client as { pool: { numUsed(): number; numPendingAcquires(): number } }).pool;
    return {
      store: new KnexStore({ knex: one, tableName }),
      // The app's own transaction, left open, holds tarn's one connection.
      holdPool: async () => {
        let free = () => {};
        const held = new Promise<void>((resolve) => (free = resolve));
        let started = () => {};
        const running = new Promise<void>((resolve) => (started = resolve));
        const transaction = one.transaction(async (trx: Knex.Transaction) => {
          await trx.raw('select 1');
          started();
          await held;
        });
        await running;
        return async () => {
          free();
          await transaction.catch(() => {});
        };
      },
      idle: () => tarn.numUsed() + tarn.numPendingAcquires() === 0,
      close: () => one.destroy(),
    };
  },
  // Knex makes its mysql2 connections itself (tarn): each is patched as it is made.
  gatedStore: async (tableName, patch) => {
    const gated = knexFactory({
      client: 'mysql2',
      connection: DATABASE_URL,
      pool: {
        min: 0,
        max: 6,
        afterCreate: (connection: object, done: (error: Error | null, connection: object) => void) => {
          patch(connection);
          done(null, connection);
        },
      },
    });
    return { store: new KnexStore({ knex: gated, tableName }), close: () => gated.destroy() };
  },
  ownTransactions: OWN,
  app,
};
