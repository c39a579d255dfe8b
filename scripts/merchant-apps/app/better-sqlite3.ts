// better-sqlite3, as packages/sqlite/README.md sets it up (without the migrate call). The app uses the same
// connection as the store: on SQLite a write through it during a delivery joins the delivery's transaction.
import { SqliteStore } from '@service-pay/sqlite';
import Database from 'better-sqlite3';
import { env, startShop } from './shop.ts';

const db = new Database(env.databaseUrl);
db.pragma('journal_mode = WAL');
const store = new SqliteStore({ database: db, tableName: env.inbox });
const insert = `insert into ${env.credits} (payment_id, client) values (?, ?)`;

startShop({
  store,
  credit: async (event, tx) => tx.prepare(insert).run(event.paymentId, env.client),
  mistakes: {
    'global: db.prepare().run()': (event) => db.prepare(insert).run(event.paymentId, env.client),
    // better-sqlite3 is synchronous: a statement run without await has already run.
    'unawaited: ctx.tx.prepare().run()': (event, tx) => {
      tx.prepare(insert).run(event.paymentId, env.client);
    },
    'own: db.transaction(fn)()': (event) => db.transaction(() => db.prepare(insert).run(event.paymentId, env.client))(),
  },
});
