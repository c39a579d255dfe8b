// Kysely, as the store READMEs set it up (without the migrate call). DB=postgres: `PostgresDialect`, the
// pool given to the store too (packages/postgres/README.md). DB=mysql: `MysqlDialect` on mysql2's callback
// pool, KYSELY_SETUP=readme as the README's snippet (`new KyselyStore({ db })`, which the store warns about
// at start-up) or KYSELY_SETUP=pool (`new KyselyStore({ db, pool })`, as its next paragraph asks).
// DB=sqlite: `SqliteDialect` on better-sqlite3 (packages/sqlite/README.md).
import Database from 'better-sqlite3';
import { Kysely, MysqlDialect, PostgresDialect, SqliteDialect } from 'kysely';
import { createPool } from 'mysql2';
import pg from 'pg';
import { env, startShop } from './shop.ts';

// biome-ignore lint/suspicious/noExplicitAny: the credits table's name is only known at run time
type Tables = Record<string, any>;

async function setUp() {
  if (process.env.DB === 'mysql') {
    const { KyselyStore } = await import('@service-pay/mysql/kysely');
    const pool = createPool(env.databaseUrl); // Kysely takes mysql2's callback pool, not mysql2/promise
    const db = new Kysely<Tables>({ dialect: new MysqlDialect({ pool }) });
    const given = process.env.KYSELY_SETUP === 'pool' ? pool : undefined;
    return { db, store: new KyselyStore({ db, pool: given, tableName: env.inbox }) };
  }
  if (process.env.DB === 'sqlite') {
    const { KyselyStore } = await import('@service-pay/sqlite/kysely');
    const db = new Kysely<Tables>({ dialect: new SqliteDialect({ database: new Database(env.databaseUrl) }) });
    return { db, store: new KyselyStore({ db, tableName: env.inbox }) };
  }
  const { KyselyStore } = await import('@service-pay/postgres/kysely');
  const pool = new pg.Pool({ connectionString: env.databaseUrl });
  const db = new Kysely<Tables>({ dialect: new PostgresDialect({ pool }) });
  return { db, store: new KyselyStore({ db, pool, tableName: env.inbox }) };
}

const { db, store } = await setUp();
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
