import { typeOrmGuardWrites } from '@service-pay/sql/testing';
import { DataSource, type EntityManager, EntitySchema } from 'typeorm';
import { TypeOrmStore } from '../../src/typeorm.js';
import { DATABASE_URL } from '../support/database.js';
import { type AppClient, type ClientFixture, type MysqlClient, tables, untyped } from './fixture.js';

const OWN = ['dataSource.transaction()', 'dataSource.manager.transaction()', 'queryRunner.startTransaction()'] as const;

/** TypeORM on mysql2: `TypeOrmStore` on the app's `DataSource`, `ctx.tx` an `EntityManager`. */
async function open(): Promise<ClientFixture<EntityManager>> {
  const t = await tables('to');
  const Mark = new EntitySchema<{ id: number; marker: string }>({
    name: 'Mark',
    tableName: t.marks,
    columns: { id: { type: Number, primary: true, generated: true }, marker: { type: String } },
  });
  const on = (poolSize: number) =>
    new DataSource({ type: 'mysql', url: DATABASE_URL, entities: [Mark], poolSize }).initialize();
  const dataSource = await on(10);
  const store = () => new TypeOrmStore({ dataSource, tableName: t.inbox });
  await store().migrate();
  const writes = typeOrmGuardWrites(dataSource, Mark);
  return {
    name: 'TypeORM',
    inbox: t.inbox,
    marks: t.marks,
    store,
    write: async (tx, marker) => {
      await tx.getRepository(Mark).insert({ marker });
    },
    slowQuery: (tx, ms) => tx.query('select sleep(?)', [ms / 1000]),
    statement: (tx, text) => tx.query(text),
    writeInOwnTransaction: async (marker) => {
      await dataSource.transaction((own) => own.getRepository(Mark).insert({ marker }));
    },
    count: t.count,
    rows: t.rows,
    guard: {
      ...writes,
      raw: { dialect: 'mysql', table: t.marks, send: (text: string) => dataSource.query(text) },
      poolOfOne: async () => {
        const one = await on(1);
        return {
          store: new TypeOrmStore({ dataSource: one, tableName: t.inbox }),
          write: (tx, marker) => tx.getRepository(Mark).insert({ marker }),
          globalWrite: (marker) => one.getRepository(Mark).insert({ marker }),
          close: () => one.destroy(),
        };
      },
    },
    close: async () => {
      await dataSource.destroy();
      await t.drop();
    },
  };
}

/** The fault rows' app: `TypeOrmStore` on a `DataSource` of its own, the credit with `ctx.tx.query`. */
async function app(databaseUrl: string): Promise<AppClient> {
  const dataSource = await new DataSource({
    type: 'mysql',
    url: databaseUrl,
    poolSize: 20,
    connectTimeout: 2_000,
  }).initialize();
  return {
    store: new TypeOrmStore({ dataSource }),
    credit: (tx, id, who) =>
      (tx as EntityManager).query('insert into credits (payment_id, instance) values (?, ?)', [id, who]),
    sleepInSql: (tx) => (tx as EntityManager).query('select sleep(30)'),
    close: () => dataSource.destroy(),
  };
}

export const typeOrm: MysqlClient = {
  id: 'typeorm',
  name: 'TypeOrmStore',
  open: () => untyped(open()),
  // No poolToFill: its driver's mysql2 pool shows no public count of its connections, so the store cannot
  // name a full pool (the timeout keeps its own message).
  gatedStore: async (tableName, patch) => {
    const dataSource = await new DataSource({ type: 'mysql', url: DATABASE_URL, poolSize: 6 }).initialize();
    // The driver's mysql2 pool, public as `driver.pool`: its connections are patched as lent.
    (dataSource.driver as unknown as { pool: { on(event: 'acquire', listener: (c: object) => void): void } }).pool.on(
      'acquire',
      patch,
    );
    return { store: new TypeOrmStore({ dataSource, tableName }), close: () => dataSource.destroy() };
  },
  ownTransactions: OWN,
  app,
};
