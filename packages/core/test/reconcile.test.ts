import { describe, expect, it } from 'vitest';
import {
  createReconciler,
  createWebhookHandler,
  MemoryDedupeStore,
  type Outcome,
  type PaidPayment,
  type PaymentPaidEvent,
  PaymentRejectedError,
  type ReadPayment,
  type ReconciliationContext,
  signWebhook,
  type WebhookStore,
} from '../src/index.js';
import { samplePaymentPaidEvent } from '../src/testing/index.js';
import { MemoryTransactionalStore, type TestTx } from './support/memory-transactional-store.js';
import { recordingLogger } from './support/recording-logger.js';

const SECRET = 'whsec_reconcile_test';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The service's side: payments it would return from GET /v1/payments/:id. */
function service(...events: PaymentPaidEvent[]) {
  const payments = new Map<string, ReadPayment & Record<string, unknown>>();
  for (const e of events) {
    payments.set(e.paymentId, {
      paymentId: e.paymentId,
      status: 'PAID',
      orderNo: e.orderNo,
      tokenSymbol: e.tokenSymbol,
      amount: e.amount,
      expireSec: 900,
      notifyUrl: 'http://127.0.0.1:9/hook',
    });
  }
  let reads = 0;
  let inFlight = 0;
  let maxInFlight = 0;
  return {
    payments,
    get reads() {
      return reads;
    },
    get maxInFlight() {
      return maxInFlight;
    },
    getPayment: async (paymentId: string) => {
      reads++;
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      try {
        await sleep(2);
        const p = payments.get(paymentId);
        if (p === undefined) throw Object.assign(new Error(`404 PAYMENT_NOT_FOUND ${paymentId}`), { status: 404 });
        return p;
      } finally {
        inFlight--;
      }
    },
  };
}

function delivery(event: PaymentPaidEvent) {
  const { body, headers } = signWebhook({ event, secret: SECRET });
  return { method: 'POST', rawBody: body, headers };
}

/** A webhook handler and a reconciler on one store and one credit, as a merchant wires them. */
function shop<S extends WebhookStore = MemoryDedupeStore>(
  getPayment: (id: string) => Promise<ReadPayment>,
  options: { store?: S; slowMs?: number; reject?: boolean } = {},
) {
  const store = options.store ?? new MemoryDedupeStore({ logger: recordingLogger() });
  const credits: Array<{ payment: PaidPayment; source: string; deliveryId: string | undefined }> = [];
  const logger = recordingLogger();
  const outcomes: Outcome[] = [];
  // One credit typed on PaidPayment serves both paths.
  const credit = async (payment: PaidPayment, ctx: ReconciliationContext | { source: string; deliveryId?: string }) => {
    if (options.slowMs) await sleep(options.slowMs);
    if (options.reject) throw new PaymentRejectedError('order cancelled');
    credits.push({ payment, source: ctx.source, deliveryId: ctx.deliveryId });
  };
  const webhook = createWebhookHandler({ secret: SECRET, store, logger, onPaymentPaid: credit });
  const reconciler = createReconciler({
    getPayment,
    store,
    logger,
    onOutcome: (o) => {
      outcomes.push(o);
    },
    onPaymentPaid: credit,
  });
  return { store, credits, logger, outcomes, webhook, reconciler };
}

describe('createReconciler: a payment whose webhook never arrived, read and credited on the same key as the webhook', () => {
  it('a PAID payment whose webhook never came is credited, once, from what the read returned', async () => {
    const event = samplePaymentPaidEvent();
    const svc = service(event);
    const { reconciler, credits, outcomes } = shop(svc.getPayment);
    expect(await reconciler.reconcile(event.paymentId)).toEqual({
      paymentId: event.paymentId,
      outcome: 'credited',
      status: 'PAID',
    });
    expect(credits).toHaveLength(1);
    // Only the four fields a read carries: nothing invented (no txId).
    expect(credits[0]?.payment).toEqual({
      paymentId: event.paymentId,
      orderNo: event.orderNo,
      tokenSymbol: event.tokenSymbol,
      amount: event.amount,
    });
    expect(credits[0]).toMatchObject({ source: 'reconciliation', deliveryId: undefined });
    expect(outcomes[0]).toMatchObject({ outcome: 'credited', status: 200, source: 'reconciliation' });
    expect(await reconciler.reconcile(event.paymentId)).toMatchObject({ outcome: 'duplicate' });
    expect(credits).toHaveLength(1);
  });

  it('a webhook after a reconciliation is a 200 duplicate, and the reverse', async () => {
    const [a, b] = [samplePaymentPaidEvent(), samplePaymentPaidEvent()];
    const svc = service(a, b);
    const { reconciler, webhook, credits } = shop(svc.getPayment);
    await reconciler.reconcile(a.paymentId);
    expect(JSON.parse((await webhook(delivery(a))).body)).toEqual({ received: true, duplicate: true });
    expect((await webhook(delivery(b))).status).toBe(200);
    expect(await reconciler.reconcile(b.paymentId)).toMatchObject({ outcome: 'duplicate' });
    expect(credits.map((c) => c.source)).toEqual(['reconciliation', 'webhook']);
  });

  it('a webhook and a reconciliation racing on 50 payments credit each exactly once', async () => {
    const events = Array.from({ length: 50 }, () => samplePaymentPaidEvent());
    const svc = service(...events);
    const { reconciler, webhook, credits } = shop(svc.getPayment, { slowMs: 15 });
    const race = events.map(async (e) => Promise.all([webhook(delivery(e)), reconciler.reconcile(e.paymentId)]));
    const answers = await Promise.all(race);
    // The loser saw the other in progress (409 / in-progress) or done (duplicate); the sender retries a 409.
    for (const [response, result] of answers) {
      expect([200, 409]).toContain(response.status);
      expect(['credited', 'duplicate', 'in-progress']).toContain(result.outcome);
    }
    await Promise.all(events.map((e) => webhook(delivery(e)))); // the retries
    const perPayment = new Map<string, number>();
    for (const c of credits) perPayment.set(c.payment.paymentId, (perPayment.get(c.payment.paymentId) ?? 0) + 1);
    expect([...perPayment.values()]).toEqual(Array(50).fill(1));
  });

  it('a payment not PAID is not-paid: nothing runs', async () => {
    const event = samplePaymentPaidEvent();
    const svc = service(event);
    (svc.payments.get(event.paymentId) as { status: string }).status = 'PENDING';
    const { reconciler, credits, outcomes } = shop(svc.getPayment);
    expect(await reconciler.reconcile(event.paymentId)).toEqual({
      paymentId: event.paymentId,
      outcome: 'not-paid',
      status: 'PENDING',
    });
    expect(credits).toHaveLength(0);
    expect(outcomes[0]).toMatchObject({ outcome: 'ignored', source: 'reconciliation' });
  });

  it('fields that differ from what was credited are a conflict: not credited, alerted', async () => {
    const event = samplePaymentPaidEvent({ amount: '12.50' });
    const svc = service(event);
    const { reconciler, webhook, credits, logger } = shop(svc.getPayment);
    await webhook(delivery(event));
    (svc.payments.get(event.paymentId) as { amount: string }).amount = '99.00';
    expect(await reconciler.reconcile(event.paymentId)).toMatchObject({
      outcome: 'conflict',
      code: 'PAYLOAD_CONFLICT',
    });
    expect(credits).toHaveLength(1);
    expect(logger.at('error').some((e) => e.fields.alert === true && e.fields.source === 'reconciliation')).toBe(true);
  });

  it('the same amount spelled differently is not a conflict (12.50 read, 12.5 in the webhook)', async () => {
    const event = samplePaymentPaidEvent({ amount: '12.5' });
    const svc = service(event);
    (svc.payments.get(event.paymentId) as { amount: string }).amount = '12.50';
    const { reconciler, webhook } = shop(svc.getPayment);
    await webhook(delivery(event));
    expect(await reconciler.reconcile(event.paymentId)).toMatchObject({ outcome: 'duplicate' });
  });

  it('a rejection is recorded: rejected, then duplicate', async () => {
    const event = samplePaymentPaidEvent();
    const { reconciler } = shop(service(event).getPayment, { reject: true });
    expect(await reconciler.reconcile(event.paymentId)).toMatchObject({ outcome: 'rejected' });
    expect(await reconciler.reconcile(event.paymentId)).toMatchObject({ outcome: 'duplicate' });
  });

  it('a read that fails, or returns something unusable, is failed with a code; never a throw or a credit', async () => {
    const event = samplePaymentPaidEvent();
    const svc = service(event);
    const { reconciler, credits, outcomes } = shop(svc.getPayment);
    expect(await reconciler.reconcile('p_unknown')).toMatchObject({
      outcome: 'failed',
      code: 'PAYMENT_READ_FAILED',
      message: expect.stringMatching(/404/),
    });
    (svc.payments.get(event.paymentId) as { amount: unknown }).amount = 12.5;
    expect(await reconciler.reconcile(event.paymentId)).toMatchObject({
      outcome: 'failed',
      code: 'PAYMENT_READ_FAILED',
      message: expect.stringMatching(/amount/),
    });
    svc.payments.set('p_other', { ...(svc.payments.get(event.paymentId) as ReadPayment), paymentId: 'p_mixed_up' });
    expect(await reconciler.reconcile('p_other')).toMatchObject({ outcome: 'failed', code: 'PAYMENT_READ_FAILED' });
    expect(await reconciler.reconcile('not-a-payment-id')).toMatchObject({
      outcome: 'failed',
      code: 'INVALID_OPTIONS',
    });
    expect(credits).toHaveLength(0);
    expect(outcomes.every((o) => o.outcome === 'failed')).toBe(true);
  });

  it('a handler that throws is failed (HANDLER_FAILED), and the next run credits it', async () => {
    const event = samplePaymentPaidEvent();
    let calls = 0;
    const store = new MemoryDedupeStore({ logger: recordingLogger() });
    const reconciler = createReconciler({
      getPayment: service(event).getPayment,
      store,
      logger: recordingLogger(),
      onPaymentPaid: () => {
        if (++calls === 1) throw new Error('database hiccup');
      },
    });
    expect(await reconciler.reconcile(event.paymentId)).toMatchObject({ outcome: 'failed', code: 'HANDLER_FAILED' });
    expect(await reconciler.reconcile(event.paymentId)).toMatchObject({ outcome: 'credited' });
  });

  it('reconcileMany bounds concurrency, keeps the order of the ids and counts each outcome', async () => {
    const events = Array.from({ length: 20 }, () => samplePaymentPaidEvent());
    const svc = service(...events);
    (svc.payments.get(events[3]?.paymentId as string) as { status: string }).status = 'EXPIRED';
    const { reconciler } = shop(svc.getPayment);
    await reconciler.reconcile(events[5]?.paymentId as string);
    const ids = [...events.map((e) => e.paymentId), 'p_missing'];
    const report = await reconciler.reconcileMany(ids, { concurrency: 3 });
    expect(report.results.map((r) => r.paymentId)).toEqual(ids);
    expect(report.counts).toEqual({
      credited: 18,
      duplicate: 1,
      'not-paid': 1,
      conflict: 0,
      rejected: 0,
      'in-progress': 0,
      failed: 1,
    });
    expect(svc.maxInFlight).toBeLessThanOrEqual(3);
    await expect(reconciler.reconcileMany(ids, { concurrency: 0 })).rejects.toMatchObject({ code: 'INVALID_OPTIONS' });
  });

  it('works with a transactional store: the credit commits in its transaction, ctx.tx given', async () => {
    const event = samplePaymentPaidEvent();
    const store = new MemoryTransactionalStore();
    const reconciler = createReconciler({
      getPayment: service(event).getPayment,
      store,
      logger: recordingLogger(),
      onPaymentPaid: (payment, ctx) => {
        (ctx.tx as TestTx).write(payment.paymentId);
      },
    });
    expect(await reconciler.reconcile(event.paymentId)).toMatchObject({ outcome: 'credited' });
    expect(store.committed).toEqual([event.paymentId]);
    expect(store.inbox.get(`payment.paid:${event.paymentId}`)?.record).toMatchObject({
      outcome: 'credited',
      source: 'reconciliation',
      deliveryId: undefined,
    });
    expect(await reconciler.reconcile(event.paymentId)).toMatchObject({ outcome: 'duplicate' });
  });

  it('refuses bad options when made', () => {
    const ok = { getPayment: async () => ({}) as ReadPayment, store: new MemoryDedupeStore(), onPaymentPaid: () => {} };
    for (const bad of [
      { ...ok, getPayment: undefined },
      { ...ok, store: undefined },
      { ...ok, onPaymentPaid: 'credit' },
      { ...ok, dedupeKey: 42 },
      { ...ok, leaseMs: -1 },
    ]) {
      expect(() => createReconciler(bad as never)).toThrowError(expect.objectContaining({ code: 'INVALID_OPTIONS' }));
    }
  });
});
