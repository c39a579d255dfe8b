// Kysely on node-postgres, as packages/postgres/README.md sets it up (the pool given to the store too;
// without the migrate call).
import { KyselyStore } from '@service-pay/postgres/kysely';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { env, startShop } from './shop.ts';

// biome-ignore lint/suspicious/noExplicitAny: the credits table's name is only known at run time
type Tables = Record<string, any>;
const pool = new pg.Pool({ connectionString: env.databaseUrl });
const db = new Kysely<Tables>({ dialect: new PostgresDialect({ pool }) });
const store = new KyselyStore({ db, pool, tableName: env.inbox });
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
