import { readFileSync } from 'node:fs';
import { createFetchHandler, signWebhook } from '@service-pay/core';
import { samplePaymentPaidEvent } from '@service-pay/core/testing';
import { MySqlStore } from '@service-pay/mysql';
import { KyselyStore } from '@service-pay/mysql/kysely';
import { testServers } from '@service-pay/test-kit';
import { Kysely, MysqlDialect } from 'kysely';
import mysqlCallbacks from 'mysql2';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, expect, it } from 'vitest';

// docs/sql/mysql-inbox.sql, the DDL for teams that own their schema, applied to an empty database of its
// own on the machine's MariaDB: stores that run no DDL of their own (`autoMigrate: false`), MySqlStore on
// mysql2 and an ORM store (Kysely), then credit each first delivery once. Both lock a key through the
// file's `_keys` slots: without its rows each answers 503.
const SERVER_URL = testServers().mysqlUrl;
const database = `t_inbox_schema_${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
const secret = 'whsec_inbox_schema_test_0123456789';
const url = new URL(SERVER_URL);
url.pathname = `/${database}`;
let admin: mysql.Connection;
let pool: mysql.Pool;
let kysely: Kysely<{ credits: { payment_id: string } }>;

beforeAll(async () => {
  admin = await mysql.createConnection({ uri: SERVER_URL, multipleStatements: true });
  await admin.query(`create database ${database}`);
  // The file as a migration tool runs it: every statement, in the new database.
  await admin.query(`use ${database}`);
  await admin.query(readFileSync(new URL('../../docs/sql/mysql-inbox.sql', import.meta.url), 'utf8'));
  await admin.query('create table credits (payment_id varchar(255) not null)');
  pool = mysql.createPool({ uri: url.href, connectionLimit: 2 });
  kysely = new Kysely({
    dialect: new MysqlDialect({ pool: mysqlCallbacks.createPool({ uri: url.href, connectionLimit: 2 }) }),
  });
});

afterAll(async () => {
  await kysely?.destroy();
  await pool?.end();
  await admin?.query(`drop database if exists ${database}`);
  await admin?.end();
});

/** Delivers one payment twice through `handle`: the answers, then that payment's credits. */
async function deliverTwice(handle: (request: Request) => Promise<Response>) {
  const event = samplePaymentPaidEvent();
  const deliver = async () => {
    const { body, headers } = signWebhook({ event, secret });
    const response = await handle(new Request('http://shop.test/webhooks/service', { method: 'POST', headers, body }));
    return [response.status, await response.json()];
  };
  const answers = [await deliver(), await deliver()];
  const [rows] = await pool.query('select count(*) as n from credits where payment_id = ?', [event.paymentId]);
  return { answers, credits: Number((rows as Array<{ n: number }>)[0]?.n) };
}

const TWICE = [
  [200, { received: true }],
  [200, { received: true, duplicate: true }],
];

it('MySqlStore (mysql2) on the documented DDL: the first delivery credited once, its duplicate not', async () => {
  const handle = createFetchHandler({
    secret,
    store: new MySqlStore({ pool, autoMigrate: false }),
    onPaymentPaid: async (event, ctx) => {
      await ctx.tx.query('insert into credits (payment_id) values (?)', [event.paymentId]);
    },
  });
  const result = await deliverTwice(handle);
  expect(result).toEqual({ answers: TWICE, credits: 1 });
});

it('KyselyStore on the documented DDL: the first delivery credited once, its duplicate not', async () => {
  const handle = createFetchHandler({
    secret,
    store: new KyselyStore({ db: kysely, autoMigrate: false }),
    onPaymentPaid: async (event, ctx) => {
      await ctx.tx.insertInto('credits').values({ payment_id: event.paymentId }).execute();
    },
  });
  const result = await deliverTwice(handle);
  expect(result).toEqual({ answers: TWICE, credits: 1 });
});

it('the stores made nothing of their own: the tables are the file’s and the app’s', async () => {
  const [rows] = await pool.query(
    'select table_name as name from information_schema.tables where table_schema = ? order by table_name',
    [database],
  );
  expect((rows as Array<{ name: string }>).map((r) => r.name)).toEqual([
    'credits',
    'service_pay_inbox',
    'service_pay_inbox_keys',
  ]);
});
