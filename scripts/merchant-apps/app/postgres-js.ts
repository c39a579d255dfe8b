// postgres.js, as packages/postgres/README.md sets it up (without the migrate call): the app's sql made with
// guardSql, so its tagged template is judged too. SQL_SETUP=plain gives the store a plain instance instead
// (the tagged template then cannot be seen, and the store warns at start-up).
import { guardSql, PostgresJsStore } from '@service-pay/postgres/postgres-js';
import postgres from 'postgres';
import { env, startShop } from './shop.ts';

const plain = postgres(env.databaseUrl, { onnotice: () => {} });
const sql = process.env.SQL_SETUP === 'plain' ? plain : guardSql(plain);
const store = new PostgresJsStore({ sql, tableName: env.inbox });
const insert = `insert into ${env.credits} (payment_id, client) values ($1, $2)`;

startShop({
  store,
  credit: (event, tx) =>
    tx`insert into ${tx(env.credits)} (payment_id, client) values (${event.paymentId}, ${env.client})`,
  mistakes: {
    'global: sql.unsafe': (event) => sql.unsafe(insert, [event.paymentId, env.client]),
    'global: sql`...` (tagged)': (event) =>
      sql`insert into ${sql(env.credits)} (payment_id, client) values (${event.paymentId}, ${env.client})`,
    'unawaited: ctx.tx`...`': (event, tx) => {
      tx`insert into ${tx(env.credits)} (payment_id, client) values (${event.paymentId}, ${env.client})`;
    },
    'own: sql.begin': (event) => sql.begin((t) => t.unsafe(insert, [event.paymentId, env.client])),
  },
});
