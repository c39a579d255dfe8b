import type { OrmClient } from '@service-pay/sql/testing';
import { DataSource, type EntityManager } from 'typeorm';
import { TypeOrmStore } from '../../src/typeorm.js';
import { DATABASE_URL } from '../support/database.js';
import { tables } from './fixture.js';

/** TypeORM on mysql2: `TypeOrmStore` on the app's `DataSource`, `ctx.tx` an `EntityManager`. */
export async function typeOrmClient(): Promise<OrmClient<EntityManager>> {
  const t = await tables('to');
  const dataSource = await new DataSource({ type: 'mysql', url: DATABASE_URL, poolSize: 10 }).initialize();
  const insert = `insert into ${t.marks} (marker) values (?)`;
  const store = () => new TypeOrmStore({ dataSource, tableName: t.inbox });
  await store().migrate();
  return {
    name: 'TypeORM',
    inbox: t.inbox,
    store,
    write: async (tx, marker) => {
      await tx.query(insert, [marker]);
    },
    slowQuery: (tx, ms) => tx.query('select sleep(?)', [ms / 1000]),
    statement: (tx, text) => tx.query(text),
    writeInOwnTransaction: (marker) =>
      dataSource.transaction(async (own) => {
        await own.query(insert, [marker]);
      }),
    count: t.count,
    rows: t.rows,
    close: async () => {
      await dataSource.destroy();
      await t.drop();
    },
  };
}
