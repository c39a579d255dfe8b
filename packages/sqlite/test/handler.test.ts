import { randomUUID } from 'node:crypto';
import { type PaymentPaidEvent, PaymentRejectedError } from '@service-pay/core';
import { samplePaymentPaidEvent, sendSigned, storeHandler } from '@service-pay/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ClientFixture, SQLITE_CLIENTS } from './clients/index.js';

/**
 * The handler end to end on every client of the registry (clients/index.ts): signed deliveries, credits
 * written through ctx.tx into the fixture's marks table, WITHOUT a unique constraint (a second credit would
 * show), the inbox read on a connection of the test's own. What only better-sqlite3's API can do (a
 * statement kept past the deadline, BEGIN through `exec`, nested `transaction()`) is in store.test.ts.
 */
const SECRET = 'whsec_sqlite_handler_tests_0123456789';
const quiet = { warn: () => {}, error: () => {} };

for (const entry of SQLITE_CLIENTS) {
  describe(`the handler with ${entry.name}`, () => {
    let client: ClientFixture<never>;
    beforeAll(async () => {
      client = await entry.open();
      await client.store().migrate(); // the fixture migrated once: a second is idempotent
    });
    afterAll(() => client?.close());

    const handler = (onPaymentPaid: (event: PaymentPaidEvent, tx: never) => Promise<void>) =>
      storeHandler<never>({ store: client.store(), secret: SECRET, logger: quiet }, onPaymentPaid);
    const send = (handle: ReturnType<typeof handler>, event: PaymentPaidEvent) => sendSigned(handle, event, SECRET);
    const inboxRow = async (paymentId: string) =>
      (await client.rows(`select * from ${client.inbox} where key = ?`, [`payment.paid:${paymentId}`]))[0];
    const event = () => samplePaymentPaidEvent({ paymentId: `p_${randomUUID()}` });

    it('credits once: a first attempt that credits then throws rolls back, the retry credits, a duplicate does not', async () => {
      const paid = event();
      let attempts = 0;
      const handle = handler(async (e, tx) => {
        await client.write(tx, e.paymentId);
        if (++attempts === 1) throw new Error('after the credit');
      });
      expect((await send(handle, paid)).status).toBe(500);
      expect(await client.count(paid.paymentId)).toBe(0);
      expect(await inboxRow(paid.paymentId)).toBeUndefined();
      expect((await send(handle, paid)).status).toBe(200);
      expect((await send(handle, paid)).status).toBe(200);
      expect(await client.count(paid.paymentId)).toBe(1);
      expect(attempts).toBe(2);
      expect(await inboxRow(paid.paymentId)).toMatchObject({
        payment_id: paid.paymentId,
        outcome: 'credited',
        source: 'webhook',
      });
    });

    it('a rejection rolls the writes back and keeps the rejection row; a changed payment is a conflict', async () => {
      const paid = event();
      const handle = handler(async (e, tx) => {
        await client.write(tx, e.paymentId);
        throw new PaymentRejectedError('amount too low');
      });
      expect((await send(handle, paid)).status).toBe(200);
      expect(await client.count(paid.paymentId)).toBe(0);
      expect(await inboxRow(paid.paymentId)).toMatchObject({ outcome: 'rejected', reason: 'amount too low' });
      expect((await send(handle, { ...paid, amount: '999' })).status).toBe(422);
    });
  });
}
