// The plain drivers, as the store READMEs set them up (without the migrate call): DB=postgres, node-postgres
// and `PostgresStore` (packages/postgres/README.md); DB=mysql, mysql2/promise and `MySqlStore`
// (packages/mysql/README.md). Both take `query(text, values)` on the pool and on ctx.tx.
import { MySqlStore } from '@service-pay/mysql';
import { PostgresStore } from '@service-pay/postgres';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { env, startShop } from './shop.ts';

const onMysql = process.env.DB === 'mysql';
const insert = `insert into ${env.credits} (payment_id, client) values ${onMysql ? '(?, ?)' : '($1, $2)'}`;

/** The client's own transaction, each driver's way: what the merchant must not do in the handler. */
async function ownTransaction(values: string[]): Promise<void> {
  if (mysqlPool !== undefined) {
    const connection = await mysqlPool.getConnection();
    try {
      await connection.beginTransaction();
      await connection.query(insert, values);
      await connection.commit();
    } finally {
      connection.release();
    }
    return;
  }
  const client = await pgPool!.connect();
  try {
    await client.query('BEGIN');
    await client.query(insert, values);
    await client.query('COMMIT');
  } finally {
    client.release();
  }
}

const mysqlPool = onMysql ? mysql.createPool(env.databaseUrl) : undefined;
const pgPool = onMysql ? undefined : new pg.Pool({ connectionString: env.databaseUrl });
const pool = (mysqlPool ?? pgPool)!;
const store =
  mysqlPool !== undefined
    ? new MySqlStore({ pool: mysqlPool, tableName: env.inbox })
    : new PostgresStore({ pool: pgPool!, tableName: env.inbox });

startShop<{ query: (text: string, values: string[]) => Promise<unknown> }>({
  store,
  credit: (event, tx) => tx.query(insert, [event.paymentId, env.client]),
  mistakes: {
    'global: pool.query': (event) => pool.query(insert, [event.paymentId, env.client]),
    'unawaited: ctx.tx.query': (event, tx) => {
      tx.query(insert, [event.paymentId, env.client]);
    },
    [onMysql ? 'own: getConnection()+beginTransaction()' : 'own: pool.connect()+BEGIN']: (event) =>
      ownTransaction([event.paymentId, env.client]),
  },
});
