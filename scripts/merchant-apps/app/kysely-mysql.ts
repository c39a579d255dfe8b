// Kysely on MySQL/MariaDB. KYSELY_SETUP=readme: the README's snippet (`new KyselyStore({ db })`, which the
// store warns about at start-up); KYSELY_SETUP=pool: `new KyselyStore({ db, pool })`, as the README's "The
// delivery's transaction is the only way to write" paragraph asks.
import { KyselyStore } from '@service-pay/mysql/kysely';
import { Kysely, MysqlDialect } from 'kysely';
import { createPool } from 'mysql2'; // Kysely takes mysql2's callback pool, not mysql2/promise
import { env, startShop } from './shop.ts';

// biome-ignore lint/suspicious/noExplicitAny: the credits table's name is only known at run time
type Tables = Record<string, any>;
const pool = createPool(env.databaseUrl);
const db = new Kysely<Tables>({ dialect: new MysqlDialect({ pool }) });
const store = new KyselyStore({
  db,
  pool: process.env.KYSELY_SETUP === 'pool' ? pool : undefined,
  tableName: env.inbox,
});
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
