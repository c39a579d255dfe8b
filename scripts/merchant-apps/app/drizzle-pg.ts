// Drizzle ORM on node-postgres, as packages/postgres/README.md sets it up (without the migrate call).
import { DrizzleStore } from '@service-pay/postgres/drizzle';
import { drizzle } from 'drizzle-orm/node-postgres';
import { pgTable, serial, text } from 'drizzle-orm/pg-core';
import pg from 'pg';
import { env, startShop } from './shop.ts';

const credits = pgTable(env.credits, {
  id: serial('id').primaryKey(),
  paymentId: text('payment_id'),
  client: text('client'),
});
const db = drizzle(new pg.Pool({ connectionString: env.databaseUrl }));
const store = new DrizzleStore({ db, tableName: env.inbox });

startShop({
  store,
  credit: (event, tx) => tx.insert(credits).values({ paymentId: event.paymentId, client: env.client }),
  mistakes: {
    'global: db.insert': (event) => db.insert(credits).values({ paymentId: event.paymentId, client: env.client }),
    'unawaited: ctx.tx.insert': (event, tx) => {
      tx.insert(credits).values({ paymentId: event.paymentId, client: env.client });
    },
    'own: db.transaction': (event) =>
      db.transaction((t) => t.insert(credits).values({ paymentId: event.paymentId, client: env.client })),
  },
});
