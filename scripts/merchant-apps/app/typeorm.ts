// TypeORM, as the store READMEs set it up (without the migrate call): DB=postgres (`type: 'postgres'`,
// packages/postgres/README.md) or DB=mysql (`type: 'mariadb'`, packages/mysql/README.md).
import { DataSource, EntitySchema } from 'typeorm';
import { env, startShop } from './shop.ts';

const onMysql = process.env.DB === 'mysql';
const { TypeOrmStore } = onMysql
  ? await import('@service-pay/mysql/typeorm')
  : await import('@service-pay/postgres/typeorm');

const Credit = new EntitySchema<{ id: number; paymentId: string; client: string }>({
  name: 'Credit',
  tableName: env.credits,
  columns: {
    id: { type: Number, primary: true, generated: true },
    paymentId: { name: 'payment_id', type: String },
    client: { type: String },
  },
});
const dataSource = await new DataSource({
  type: onMysql ? 'mariadb' : 'postgres',
  url: env.databaseUrl,
  entities: [Credit],
}).initialize();
const store = new TypeOrmStore({ dataSource, tableName: env.inbox });
const row = (paymentId: string) => ({ paymentId, client: env.client });

startShop({
  store,
  credit: (event, tx) => tx.getRepository(Credit).insert(row(event.paymentId)),
  mistakes: {
    'global: getRepository().insert': (event) => dataSource.getRepository(Credit).insert(row(event.paymentId)),
    'global: manager.save': (event) => dataSource.manager.save(Credit, row(event.paymentId)),
    'unawaited: ctx.tx insert': (event, tx) => {
      tx.getRepository(Credit).insert(row(event.paymentId));
    },
    'own: dataSource.transaction': (event) =>
      dataSource.transaction((manager) => manager.getRepository(Credit).insert(row(event.paymentId))),
    'own: queryRunner.startTransaction': async (event) => {
      const runner = dataSource.createQueryRunner();
      try {
        await runner.connect();
        await runner.startTransaction();
        await runner.manager.getRepository(Credit).insert(row(event.paymentId));
        await runner.commitTransaction();
      } finally {
        await runner.release();
      }
    },
  },
});
