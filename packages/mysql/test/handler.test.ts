import { type PaymentPaidEvent, PaymentRejectedError, signWebhook, type WebhookRequest } from '@service-pay/core';
import { latch, samplePaymentPaidEvent, storeHandler } from '@service-pay/core/testing';
import { deadlockTables, deadlockWithDelivery } from '@service-pay/sql/testing';
import { expectFailedAttemptThenOneCredit, failsFirstAttempt } from '@service-pay/test-kit/credit-once';
import type { Connection as CallbackConnection } from 'mysql2';
import type { Pool, PoolConnection } from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MySqlStore } from '../src/index.js';
import { openPool, uniqueName } from './support/database.js';

/**
 * The handler end to end with MySqlStore on MariaDB: signed deliveries, credits written through ctx.tx into a
 * table WITHOUT a unique constraint (a second credit would show).
 */
const SECRET = 'whsec_mysql_handler_tests_0123456789';
const quiet = { warn: () => {}, error: () => {} };
let pool: Pool;
let store: MySqlStore;
const inbox = uniqueName('inbox');
const credits = uniqueName('credits');

function delivery(event: PaymentPaidEvent, attempt: number): WebhookRequest {
  const { body, headers } = signWebhook({ event, secret: SECRET, deliveryId: `dl_${event.paymentId}_${attempt}` });
  return { method: 'POST', headers, rawBody: body };
}

async function creditsOf(paymentId: string): Promise<number> {
  const [rows] = await pool.query(`select count(*) as n from ${credits} where payment_id = ?`, [paymentId]);
  return Number((rows as Array<{ n: number }>)[0]?.n);
}

/** A handler that writes the credit through ctx.tx, then does `then` (throw, park, reject, outlive its deadline). */
function handler(then: (tx: PoolConnection) => unknown, handlerTimeoutMs?: number) {
  return storeHandler<PoolConnection>({ store, secret: SECRET, logger: quiet, handlerTimeoutMs }, async (paid, tx) => {
    await tx.query(`insert into ${credits} (payment_id) values (?)`, [paid.paymentId]);
    await then(tx);
  });
}

beforeAll(async () => {
  pool = await openPool();
  store = new MySqlStore({ pool, tableName: inbox });
  await store.migrate();
  await store.migrate(); // idempotent
  await pool.query(`create table ${credits} (id bigint auto_increment primary key, payment_id varchar(255) not null)`);
});
afterAll(async () => {
  await pool.query(`drop table if exists ${credits}, ${inbox}, ${inbox}_keys`);
  await pool.end();
});

describe('the handler with MySqlStore (MariaDB)', () => {
  it('credits once: a throw after the credit rolls it back, the retry credits, a third delivery is a duplicate', async () => {
    const event = samplePaymentPaidEvent();
    const failing = failsFirstAttempt('fails after writing its credit');
    const handle = handler(() => failing.afterCredit());
    await expectFailedAttemptThenOneCredit(
      (attempt) => handle(delivery(event, attempt)),
      () => creditsOf(event.paymentId),
    );
  });

  // The handler's statements through either of mysql2's faces of the delivery's session: the promise API
  // (`ctx.tx`) and the callback API under it (`ctx.tx.connection`, typed by mysql2 as the promise one), whose
  // failures are followed alike.
  const faces: Array<[string, (tx: PoolConnection, text: string, values?: unknown[]) => Promise<unknown>]> = [
    ['ctx.tx.query', (tx, text, values) => tx.query(text, values)],
    [
      'ctx.tx.connection.query with a callback',
      (tx, text, values) =>
        new Promise((resolve, reject) => {
          (tx.connection as unknown as CallbackConnection).query(text, values, (error: unknown, rows: unknown) =>
            error ? reject(error) : resolve(rows),
          );
        }),
    ],
  ];

  it.each(faces)(
    'a deadlock the handler caught through %s rolled its transaction back: the write after it is refused, 500, nothing credited; the retry credits once',
    async (_face, send) => {
      const rows = uniqueName('deadlock');
      const tables = deadlockTables(rows);
      for (const text of tables.create) await pool.query(text);
      // A pool of its own: the store's refuses a transaction opened on it during a delivery.
      const otherPool = await openPool({ connectionLimit: 1 });
      const other = await otherPool.getConnection();
      try {
        const event = samplePaymentPaidEvent();
        let attempt = 0;
        let deadlocked: unknown;
        let after: unknown = 'not tried';
        const handle = handler(async (tx) => {
          attempt += 1;
          if (attempt > 1) return;
          deadlocked = await deadlockWithDelivery((text) => send(tx, text), other, rows);
          // After the server's rollback this insert would run on its own, in autocommit, and stay.
          after = await Promise.resolve()
            .then(() => send(tx, `insert into ${credits} (payment_id) values (?)`, [`after:${event.paymentId}`]))
            .then(
              () => 'written',
              (error: unknown) => error,
            );
        });
        expect((await handle(delivery(event, 1))).status).toBe(500);
        expect(String((deadlocked as Error)?.message)).toMatch(/deadlock/i);
        expect(String((after as Error)?.message ?? after)).toMatch(/ended the transaction/);
        expect(await creditsOf(event.paymentId)).toBe(0);
        expect(await creditsOf(`after:${event.paymentId}`)).toBe(0);
        expect((await handle(delivery(event, 2))).status).toBe(200);
        expect(await creditsOf(event.paymentId)).toBe(1);
      } finally {
        other.release();
        await otherPool.end();
        await pool.query(tables.drop);
      }
    },
  );

  it('answers 409 at once to a concurrent delivery of the same payment, then credits once', async () => {
    const event = samplePaymentPaidEvent();
    const release = latch();
    const entered = latch();
    const handle = handler(async () => {
      entered.open();
      await release.opened;
    });
    const first = handle(delivery(event, 1));
    // The first delivery holds the key (its handler runs) before the second arrives: no timing guess.
    await entered.opened;
    const second = await handle(delivery(event, 2));
    expect(second.status).toBe(409);
    release.open();
    expect((await first).status).toBe(200);
    expect(await creditsOf(event.paymentId)).toBe(1);
  });

  it('keeps a rejection: the handler writes roll back, the rejected row commits, later deliveries are duplicates', async () => {
    const event = samplePaymentPaidEvent();
    const handle = handler(() => {
      throw new PaymentRejectedError('order cancelled');
    });
    expect((await handle(delivery(event, 1))).status).toBe(200);
    expect((await handle(delivery(event, 2))).body).toContain('duplicate');
    expect(await creditsOf(event.paymentId)).toBe(0);
    const [rows] = await pool.query(`select outcome, reason, delivery_id from ${inbox} where payment_id = ?`, [
      event.paymentId,
    ]);
    expect(rows).toEqual([{ outcome: 'rejected', reason: 'order cancelled', delivery_id: `dl_${event.paymentId}_1` }]);
  });

  it('rolls back a handler past its deadline, inside a statement, and credits once on the retry', async () => {
    const event = samplePaymentPaidEvent();
    let calls = 0;
    const handle = handler(async (tx) => {
      calls += 1;
      if (calls === 1) await tx.query('select sleep(10)');
    }, 300);
    expect((await handle(delivery(event, 1))).status).toBe(500);
    expect((await handle(delivery(event, 2))).status).toBe(200);
    expect(await creditsOf(event.paymentId)).toBe(1);
  });
});
