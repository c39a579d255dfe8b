// Knex, as the store READMEs set it up (without the migrate call): DB=postgres (`client: 'pg'`,
// packages/postgres/README.md) or DB=mysql (`client: 'mysql2'`, packages/mysql/README.md).
import makeKnex from 'knex';
import { env, startShop } from './shop.ts';

const onMysql = process.env.DB === 'mysql';
const { KnexStore } = onMysql ? await import('@service-pay/mysql/knex') : await import('@service-pay/postgres/knex');
const knex = makeKnex({ client: onMysql ? 'mysql2' : 'pg', connection: env.databaseUrl });
const store = new KnexStore({ knex, tableName: env.inbox });
const row = (paymentId: string) => ({ payment_id: paymentId, client: env.client });

startShop({
  store,
  credit: (event, tx) => tx(env.credits).insert(row(event.paymentId)),
  mistakes: {
    'global: knex(table).insert': (event) => knex(env.credits).insert(row(event.paymentId)),
    'unawaited: ctx.tx(table).insert': (event, tx) => {
      tx(env.credits).insert(row(event.paymentId));
    },
    'own: knex.transaction': (event) => knex.transaction((t) => t(env.credits).insert(row(event.paymentId))),
  },
});
