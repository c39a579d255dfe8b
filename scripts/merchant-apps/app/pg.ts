// node-postgres, as packages/postgres/README.md sets it up (without the migrate call: the first delivery
// meets an empty database).
import { PostgresStore } from '@service-pay/postgres';
import pg from 'pg';
import { env, startShop } from './shop.ts';

const pool = new pg.Pool({ connectionString: env.databaseUrl });
const store = new PostgresStore({ pool, tableName: env.inbox });
const insert = `insert into ${env.credits} (payment_id, client) values ($1, $2)`;

startShop({
  store,
  credit: (event, tx) => tx.query(insert, [event.paymentId, env.client]),
  mistakes: {
    'global: pool.query': (event) => pool.query(insert, [event.paymentId, env.client]),
    'unawaited: ctx.tx.query': (event, tx) => {
      tx.query(insert, [event.paymentId, env.client]);
    },
    'own: pool.connect()+BEGIN': async (event) => {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        await client.query(insert, [event.paymentId, env.client]);
        await client.query('COMMIT');
      } finally {
        client.release();
      }
    },
  },
});
