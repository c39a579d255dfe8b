// mysql2, as packages/mysql/README.md sets it up (without the migrate call).
import { MySqlStore } from '@service-pay/mysql';
import mysql from 'mysql2/promise';
import { env, startShop } from './shop.ts';

const pool = mysql.createPool(env.databaseUrl);
const store = new MySqlStore({ pool, tableName: env.inbox });
const insert = `insert into ${env.credits} (payment_id, client) values (?, ?)`;

startShop({
  store,
  credit: (event, tx) => tx.query(insert, [event.paymentId, env.client]),
  mistakes: {
    'global: pool.query': (event) => pool.query(insert, [event.paymentId, env.client]),
    'unawaited: ctx.tx.query': (event, tx) => {
      tx.query(insert, [event.paymentId, env.client]);
    },
    'own: getConnection()+beginTransaction()': async (event) => {
      const connection = await pool.getConnection();
      try {
        await connection.beginTransaction();
        await connection.query(insert, [event.paymentId, env.client]);
        await connection.commit();
      } finally {
        connection.release();
      }
    },
  },
});
