// Drizzle ORM on mysql2, as packages/mysql/README.md sets it up (without the migrate call).
import { DrizzleStore } from '@service-pay/mysql/drizzle';
import { int, mysqlTable, varchar } from 'drizzle-orm/mysql-core';
import { drizzle } from 'drizzle-orm/mysql2';
import { createPool } from 'mysql2';
import { env, startShop } from './shop.ts';

const credits = mysqlTable(env.credits, {
  id: int('id').autoincrement().primaryKey(),
  paymentId: varchar('payment_id', { length: 255 }),
  client: varchar('client', { length: 64 }),
});
const db = drizzle({ client: createPool(env.databaseUrl) });
const store = new DrizzleStore({ db, tableName: env.inbox });
const row = (paymentId: string) => ({ paymentId, client: env.client });

startShop({
  store,
  credit: (event, tx) => tx.insert(credits).values(row(event.paymentId)),
  mistakes: {
    'global: db.insert': (event) => db.insert(credits).values(row(event.paymentId)),
    'unawaited: ctx.tx.insert': (event, tx) => {
      tx.insert(credits).values(row(event.paymentId));
    },
    'own: db.transaction': (event) => db.transaction((t) => t.insert(credits).values(row(event.paymentId))),
  },
});
