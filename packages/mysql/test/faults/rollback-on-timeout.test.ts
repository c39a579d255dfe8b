import { type PaymentPaidEvent, signWebhook, type TransactionalStore, type WebhookRequest } from '@service-pay/core';
import { samplePaymentPaidEvent, storeHandler } from '@service-pay/core/testing';
import { MariaDbServer } from '@service-pay/test-kit/mariadb';
import { Kysely, MysqlDialect, sql, type Transaction } from 'kysely';
import mysqlCallbacks from 'mysql2';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MySqlStore } from '../../src/index.js';
import { KyselyStore } from '../../src/kysely.js';

/**
 * A server started with `innodb_rollback_on_timeout = ON` (a setting only a server's start can give, so a
 * server of this file's own): there a lock wait timeout rolls the whole transaction back, not only the
 * statement. A handler that catches it and writes again would write outside any transaction, in autocommit,
 * while the credit before it is gone: the store must refuse that write and fail the delivery, and the retry
 * credit once. Credits go to a table WITHOUT a unique constraint (a second credit would show).
 */
const SECRET = 'whsec_mysql_rollback_on_timeout_0123456789';
const quiet = { warn: () => {}, error: () => {} };
let server: MariaDbServer;
let pool: mysql.Pool;
let other: mysql.Connection;

function delivery(event: PaymentPaidEvent, attempt: number): WebhookRequest {
  const { body, headers } = signWebhook({ event, secret: SECRET, deliveryId: `dl_${event.paymentId}_${attempt}` });
  return { method: 'POST', headers, rawBody: body };
}

async function count(marker: string): Promise<number> {
  const [rows] = await pool.query('select count(*) as n from credits where marker = ?', [marker]);
  return Number((rows as Array<{ n: number }>)[0]?.n);
}

beforeAll(async () => {
  server = await MariaDbServer.start(['--innodb-rollback-on-timeout=ON']);
  pool = mysql.createPool({ uri: server.url, connectionLimit: 10 });
  await pool.query('create table credits (id bigint auto_increment primary key, marker varchar(255) not null)');
  await pool.query('create table contended (id int primary key, v int not null)');
  await pool.query('insert into contended values (1, 0)');
  other = await mysql.createConnection({ uri: server.url });
}, 90_000);
afterAll(async () => {
  await other?.end();
  await pool?.end();
  await server?.stop();
});

/**
 * The delivery's statement waits for a row `other` holds, for one second, and times out: the handler
 * catches that, then writes again. Resolves with the timeout's error and what the write after it got.
 */
async function timeOutThenWrite(
  send: (text: string) => PromiseLike<unknown>,
  write: (marker: string) => PromiseLike<unknown>,
  marker: string,
): Promise<{ timedOut: unknown; after: unknown }> {
  await other.query('begin');
  await other.query('select v from contended where id = 1 for update');
  const timedOut = await Promise.resolve(
    send('SET STATEMENT innodb_lock_wait_timeout = 1 FOR UPDATE contended SET v = v + 1 WHERE id = 1'),
  ).then(
    () => 'not timed out',
    (error: unknown) => error,
  );
  await other.query('rollback');
  // A guard refuses as it is called (a throw) or as the query runs (a rejection): either way, it is seen.
  const after = await Promise.resolve()
    .then(() => write(`after:${marker}`))
    .then(
      () => 'written',
      (error: unknown) => error,
    );
  return { timedOut, after };
}

/** Two deliveries of one payment through `handle`: the first times out after its credit; see the file's note. */
async function timeoutThenRetry<Tx>(
  store: TransactionalStore<Tx>,
  writes: {
    send: (tx: Tx, text: string) => PromiseLike<unknown>;
    credit: (tx: Tx, marker: string) => PromiseLike<unknown>;
  },
): Promise<void> {
  let seen: { timedOut: unknown; after: unknown } = { timedOut: 'not run', after: 'not run' };
  let calls = 0;
  const handle = storeHandler<Tx>({ store, secret: SECRET, logger: quiet }, async (paid, tx) => {
    calls += 1;
    await writes.credit(tx, paid.paymentId);
    if (calls > 1) return;
    seen = await timeOutThenWrite(
      (text) => writes.send(tx, text),
      (marker) => writes.credit(tx, marker),
      paid.paymentId,
    );
  });
  const event = samplePaymentPaidEvent();
  const first = await handle(delivery(event, 1));
  expect(first.status, first.body).toBe(500);
  expect((seen.timedOut as { errno?: unknown }).errno).toBe(1205);
  expect(String((seen.after as Error).message)).toMatch(/ended the transaction/);
  expect(await count(event.paymentId)).toBe(0);
  expect(await count(`after:${event.paymentId}`)).toBe(0);
  expect((await handle(delivery(event, 2))).status).toBe(200);
  expect(await count(event.paymentId)).toBe(1);
}

describe('a lock wait timeout on a server that rolls the transaction back for it (innodb_rollback_on_timeout)', () => {
  it('MySqlStore: the write after the caught timeout is refused, 500, nothing credited; the retry credits once', async () => {
    await timeoutThenRetry<mysql.PoolConnection>(new MySqlStore({ pool, tableName: 'inbox_mysql2' }), {
      send: (tx, text) => tx.query(text),
      credit: (tx, marker) => tx.query('insert into credits (marker) values (?)', [marker]),
    });
  });

  it('KyselyStore: the same through the store every ORM shares', async () => {
    const db = new Kysely<{ credits: { marker: string } }>({
      dialect: new MysqlDialect({ pool: mysqlCallbacks.createPool({ uri: server.url, connectionLimit: 5 }) }),
    });
    try {
      await timeoutThenRetry<Transaction<{ credits: { marker: string } }>>(
        new KyselyStore({ db, tableName: 'inbox_kysely' }),
        {
          send: (tx, text) => sql.raw(text).execute(tx),
          credit: (tx, marker) => tx.insertInto('credits').values({ marker }).execute(),
        },
      );
    } finally {
      await db.destroy();
    }
  });
});
