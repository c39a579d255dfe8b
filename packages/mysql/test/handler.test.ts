import { type PaymentPaidEvent, PaymentRejectedError, signWebhook, type WebhookRequest } from '@service-pay/core';
import { latch, samplePaymentPaidEvent, storeHandler } from '@service-pay/core/testing';
import { deadlockTables, deadlockWithDelivery } from '@service-pay/sql/testing';
import { expectFailedAttemptThenOneCredit, failsFirstAttempt } from '@service-pay/test-kit/credit-once';
import type { Connection as CallbackConnection } from 'mysql2';
import type { PoolConnection } from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ClientFixture, MYSQL_CLIENTS } from './clients/index.js';
import { openPool, uniqueName } from './support/database.js';

/**
 * The handler end to end on every client of the registry (clients/index.ts) on MariaDB: signed deliveries,
 * credits written through ctx.tx into the fixture's marks table, WITHOUT a unique constraint (a second
 * credit would show).
 */
const SECRET = 'whsec_mysql_handler_tests_0123456789';
const quiet = { warn: () => {}, error: () => {} };

function delivery(event: PaymentPaidEvent, attempt: number): WebhookRequest {
  const { body, headers } = signWebhook({ event, secret: SECRET, deliveryId: `dl_${event.paymentId}_${attempt}` });
  return { method: 'POST', headers, rawBody: body };
}

type Send = (client: ClientFixture<never>, tx: never, text: string) => PromiseLike<unknown>;

/**
 * The ways a handler sends a statement through `ctx.tx`: the client's own, and for mysql2 also the callback
 * API under the promise one (`ctx.tx.connection`, typed by mysql2 as the promise one), whose failures are
 * followed alike.
 */
function facesOf(id: string): Array<[string, Send]> {
  const own: [string, Send] = [
    'ctx.tx',
    (client, tx, text) => (client.statement as NonNullable<typeof client.statement>)(tx, text),
  ];
  if (id !== 'mysql2') return [own];
  return [
    ['ctx.tx.query', (_client, tx, text) => (tx as PoolConnection).query(text)],
    [
      'ctx.tx.connection.query with a callback',
      (_client, tx, text) =>
        new Promise((resolve, reject) => {
          ((tx as PoolConnection).connection as unknown as CallbackConnection).query(
            text,
            (error: unknown, rows: unknown) => (error ? reject(error) : resolve(rows)),
          );
        }),
    ],
  ];
}

for (const entry of MYSQL_CLIENTS) {
  describe(`the handler with ${entry.name} (MariaDB)`, () => {
    let client: ClientFixture<never>;
    beforeAll(async () => {
      client = await entry.open();
      await client.store().migrate(); // the fixture migrated once: a second is idempotent
    });
    afterAll(() => client?.close());

    /** A handler that writes the credit through ctx.tx, then does `then` (throw, park, outlive its deadline). */
    const handler = (then: (tx: never) => unknown, handlerTimeoutMs?: number) =>
      storeHandler<never>(
        { store: client.store(), secret: SECRET, logger: quiet, handlerTimeoutMs },
        async (paid, tx) => {
          await client.write(tx, paid.paymentId);
          await then(tx);
        },
      );

    it('credits once: a throw after the credit rolls it back, the retry credits, a third delivery is a duplicate', async () => {
      const event = samplePaymentPaidEvent();
      const failing = failsFirstAttempt('fails after writing its credit');
      const handle = handler(() => failing.afterCredit());
      await expectFailedAttemptThenOneCredit(
        (attempt) => handle(delivery(event, attempt)),
        () => client.count(event.paymentId),
      );
    });

    it.each(facesOf(entry.id))(
      'a deadlock the handler caught through %s rolled its transaction back: the write after it is refused, 500, nothing credited; the retry credits once',
      async (_face, send) => {
        const rows = uniqueName('deadlock');
        const tables = deadlockTables(rows);
        for (const text of tables.create) await client.rows(text);
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
            deadlocked = await deadlockWithDelivery((text) => send(client, tx, text), other, rows);
            // After the server's rollback this insert would run on its own, in autocommit, and stay.
            after = await Promise.resolve()
              .then(() => send(client, tx, `insert into ${client.marks} (marker) values ('after:${event.paymentId}')`))
              .then(
                () => 'written',
                (error: unknown) => error,
              );
          });
          expect((await handle(delivery(event, 1))).status).toBe(500);
          expect(String((deadlocked as Error)?.message)).toMatch(/deadlock/i);
          expect(String((after as Error)?.message ?? after)).toMatch(/ended the transaction/);
          expect(await client.count(event.paymentId)).toBe(0);
          expect(await client.count(`after:${event.paymentId}`)).toBe(0);
          expect((await handle(delivery(event, 2))).status).toBe(200);
          expect(await client.count(event.paymentId)).toBe(1);
        } finally {
          other.release();
          await otherPool.end();
          await client.rows(tables.drop);
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
      expect(await client.count(event.paymentId)).toBe(1);
    });

    it('keeps a rejection: the handler writes roll back, the rejected row commits, later deliveries are duplicates', async () => {
      const event = samplePaymentPaidEvent();
      const handle = handler(() => {
        throw new PaymentRejectedError('order cancelled');
      });
      expect((await handle(delivery(event, 1))).status).toBe(200);
      expect((await handle(delivery(event, 2))).body).toContain('duplicate');
      expect(await client.count(event.paymentId)).toBe(0);
      const rows = await client.rows(`select outcome, reason, delivery_id from ${client.inbox} where payment_id = ?`, [
        event.paymentId,
      ]);
      expect(rows).toEqual([
        { outcome: 'rejected', reason: 'order cancelled', delivery_id: `dl_${event.paymentId}_1` },
      ]);
    });

    it('rolls back a handler past its deadline, inside a statement, and credits once on the retry', async () => {
      const event = samplePaymentPaidEvent();
      let calls = 0;
      const handle = handler(async (tx) => {
        calls += 1;
        if (calls === 1) await client.slowQuery?.(tx, 10_000);
      }, 300);
      expect((await handle(delivery(event, 1))).status).toBe(500);
      expect((await handle(delivery(event, 2))).status).toBe(200);
      expect(await client.count(event.paymentId)).toBe(1);
    });
  });
}
