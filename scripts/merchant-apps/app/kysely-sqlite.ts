// Kysely on better-sqlite3, as packages/sqlite/README.md sets it up (without the migrate call).
import { KyselyStore } from '@service-pay/sqlite/kysely';
import Database from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { env, startShop } from './shop.ts';

// biome-ignore lint/suspicious/noExplicitAny: the credits table's name is only known at run time
type Tables = Record<string, any>;
const db = new Kysely<Tables>({ dialect: new SqliteDialect({ database: new Database(env.databaseUrl) }) });
const store = new KyselyStore({ db, tableName: env.inbox });
const row = (paymentId: string) => ({ payment_id: paymentId, client: env.client });

startShop({
  store,
  credit: (event, tx) => tx.insertInto(env.credits).values(row(event.paymentId)).execute(),
  mistakes: {
    'global: db.insertInto': (event) => db.insertInto(env.credits).values(row(event.paymentId)).execute(),
    'unawaited: ctx.tx.insertInto': (event, tx) => {
      tx.insertInto(env.credits).values(row(event.paymentId)).execute();
    },
    'own: db.transaction': (event) =>
      db.transaction().execute((t) => t.insertInto(env.credits).values(row(event.paymentId)).execute()),
  },
});
