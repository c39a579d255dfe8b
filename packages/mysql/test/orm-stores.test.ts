import { createWebhookHandler, type PaymentPaidEvent, signWebhook, type WebhookRequest } from '@service-pay/core';
import { OwnTransactionError } from '@service-pay/core/node';
import { samplePaymentPaidEvent, transactionalStoreConformance } from '@service-pay/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ORM_CLIENTS, type OrmClient } from './support/orm-clients.js';

/**
 * The ORM stores on MySQL/MariaDB (Kysely, Drizzle) on the machine's MariaDB: the transactional
 * conformance suite, the guard on `ctx.tx`, and what the user's natural mistake (the ORM's own transaction
 * inside the handler) now produces. Marks are counted in a table without a unique constraint, so a second
 * credit would show.
 */
const SECRET = 'whsec_mysql_orm_store_tests_01234567';

function delivery(event: PaymentPaidEvent, attempt = 1): WebhookRequest {
  const { body, headers } = signWebhook({ event, secret: SECRET, deliveryId: `dl_orm_${event.paymentId}_${attempt}` });
  return { method: 'POST', headers, rawBody: body };
}

let sequence = 0;
const unique = () => `${Date.now().toString(36)}_${(sequence++).toString(36)}`;

for (const open of ORM_CLIENTS) {
  // biome-ignore lint/suspicious/noExplicitAny: each client has its own transaction type
  let client: OrmClient<any>;
  const label = open.name.replace(/Client$/, '');

  describe(`ORM store (${label}) on MariaDB`, () => {
    beforeAll(async () => {
      client = await open();
    });
    afterAll(async () => {
      await client?.close();
    });

    describe('transactional conformance', () => {
      const cases = transactionalStoreConformance(() => client.store(), {
        write: (tx, marker) => client.write(tx, marker),
        count: (marker) => client.count(marker),
        slowQuery: (tx, ms) => client.slowQuery(tx, ms),
      });
      for (const c of cases) it(c.name, c.run);
    });

    it('credits once through ctx.tx with the ORM, a throw after the write rolls it back, the retry credits once', async () => {
      const event = samplePaymentPaidEvent();
      let calls = 0;
      const handle = createWebhookHandler({
        secret: SECRET,
        store: client.store(),
        logger: { warn: () => {}, error: () => {} },
        onPaymentPaid: async (paid, ctx) => {
          calls += 1;
          await client.write(ctx.tx, paid.paymentId);
          if (calls === 1) throw new Error('the first attempt fails after writing its credit');
        },
      });
      expect((await handle(delivery(event, 1))).status).toBe(500);
      expect(await client.count(event.paymentId)).toBe(0);
      expect((await handle(delivery(event, 2))).status).toBe(200);
      const third = await handle(delivery(event, 3));
      expect(third.status).toBe(200);
      expect(third.body).toContain('duplicate');
      expect(await client.count(event.paymentId)).toBe(1);
      expect(calls).toBe(2);
    });

    it('answers a delivery whose key another transaction holds at once (409), then credits once', async () => {
      const event = samplePaymentPaidEvent();
      let release: () => void = () => {};
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      let entered: () => void = () => {};
      const inside = new Promise<void>((resolve) => {
        entered = resolve;
      });
      const handle = createWebhookHandler({
        secret: SECRET,
        store: client.store(),
        onPaymentPaid: async (paid, ctx) => {
          await client.write(ctx.tx, paid.paymentId);
          entered();
          await gate;
        },
      });
      const first = handle(delivery(event, 1));
      await inside;
      const started = Date.now();
      const second = await handle(delivery(event, 2));
      expect(second.status).toBe(409);
      // Not waiting for the holder: the holder is parked until released below.
      expect(Date.now() - started).toBeLessThan(5_000);
      release();
      expect((await first).status).toBe(200);
      expect((await handle(delivery(event, 3))).body).toContain('duplicate');
      expect(await client.count(event.paymentId)).toBe(1);
    });

    it("the natural mistake (the ORM's own transaction in the handler) fails clearly and credits nothing", async () => {
      const event = samplePaymentPaidEvent();
      const logged: Array<Record<string, unknown>> = [];
      const handle = createWebhookHandler({
        secret: SECRET,
        store: client.store(),
        logger: { warn: () => {}, error: (fields) => logged.push(fields as Record<string, unknown>) },
        onPaymentPaid: async (paid) => {
          await client.writeInOwnTransaction(paid.paymentId);
        },
      });
      for (let attempt = 1; attempt <= 3; attempt++) {
        expect((await handle(delivery(event, attempt))).status).toBe(500);
      }
      expect(await client.count(event.paymentId)).toBe(0);
      const err = logged[0]?.err as OwnTransactionError | undefined;
      expect(err).toBeInstanceOf(OwnTransactionError);
      expect(err?.code).toBe('OWN_TRANSACTION_IN_HANDLER');
      expect(err?.message).toMatch(/Write the credit through ctx\.tx/);
      // Outside a delivery the app's client is untouched.
      await client.writeInOwnTransaction(`outside:${event.paymentId}`);
      expect(await client.count(`outside:${event.paymentId}`)).toBe(1);
    });

    it('ctx.tx refuses any use once the delivery has ended', async () => {
      const store = client.store();
      const claim = await store.begin(`guard:${unique()}`, 'fp');
      if (claim.state !== 'claimed') throw new Error(`expected a claim, got ${claim.state}`);
      const { tx } = claim.session;
      await client.write(tx, 'guard');
      await claim.session.rollback(new Error('done'));
      // Prisma's model delegates are objects, not calls the guard sees: Prisma refuses them itself (its
      // transaction client is bound to the transaction, never to a pooled connection).
      await expect(Promise.resolve().then(() => client.write(tx, 'late'))).rejects.toThrow(
        /this delivery transaction has ended|Transaction already closed/,
      );
      expect(await client.count('late')).toBe(0);
    });

    it('makes its lock slots again when they are missing (autoMigrate, the default)', async () => {
      const store = client.store();
      await client.rows(`drop table ${client.inbox}_keys`);
      const claim = await store.begin(`old:${unique()}`, 'fp');
      expect(claim.state).toBe('claimed');
      if (claim.state === 'claimed') await claim.session.rollback(new Error('done'));
    });

    it('prunes old rows and answers how many; a delivery after the prune claims again', async () => {
      const store = client.store();
      const key = `prune:${unique()}`;
      const claim = await store.begin(key, 'fp');
      if (claim.state !== 'claimed') throw new Error('expected a claim');
      await claim.session.commit({ outcome: 'credited', paymentId: 'p_prune', deliveryId: 'dl_1', source: 'webhook' });
      expect(await store.prune({ olderThanMs: 60_000 })).toBe(0);
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(await store.prune({ olderThanMs: 1 })).toBeGreaterThanOrEqual(1);
      const again = await store.begin(key, 'fp');
      expect(again.state).toBe('claimed');
      if (again.state === 'claimed') await again.session.rollback(new Error('done'));
      await expect(store.prune({ olderThanMs: -1 })).rejects.toThrow(/olderThanMs must be a number/);
    });

    it('takes the key without waiting, whatever is in flight: 20 parallel first deliveries of one payment while the first holds it', async () => {
      const store = client.store();
      const key = `burst:${unique()}`;
      const first = await store.begin(key, 'fp');
      if (first.state !== 'claimed') throw new Error('expected a claim');
      const started = Date.now();
      const others = await Promise.all(Array.from({ length: 20 }, () => store.begin(key, 'fp')));
      expect(others.map((o) => o.state)).toEqual(Array(20).fill('in-progress'));
      expect(Date.now() - started).toBeLessThan(5_000); // not behind the holder, which is still open here
      await first.session.commit({ outcome: 'credited', paymentId: 'p_b', deliveryId: 'dl_b', source: 'webhook' });
      expect(await store.begin(key, 'fp')).toEqual({ state: 'completed', fingerprint: 'fp' });
    });

    it('keeps a rejection reason with a question mark and a backslash intact', async () => {
      const store = client.store();
      const key = `reject:${unique()}`;
      const claim = await store.begin(key, 'fp');
      if (claim.state !== 'claimed') throw new Error('expected a claim');
      const reason = "why? it's a\\?b";
      await claim.session.commit({
        outcome: 'rejected',
        paymentId: 'p_r',
        deliveryId: undefined,
        source: 'webhook',
        reason,
      });
      expect(await store.begin(key, 'fp')).toEqual({ state: 'completed', fingerprint: 'fp' });
      const [row] = await client.rows(`select reason, outcome from ${client.inbox} where \`key\` = ?`, [key]);
      expect(row).toEqual({ reason, outcome: 'rejected' });
    });
  });
}
