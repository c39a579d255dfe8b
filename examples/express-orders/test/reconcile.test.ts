import { createServiceClient } from '@service-pay/client';
import { createReconciler } from '@service-pay/core';
import { simulatorShopConfig } from '@service-pay/example-shop-kit';
import { generateMerchant, type Simulator, startSimulator } from '@service-pay/simulator';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startExpressShop } from './start-shop.js';

/**
 * Reconciliation end to end: the simulator is the payment service (webhooks and `GET /v1/payments/:id`
 * over real HTTP), the Express shop is the app, with its real credit and its real reconcile pass. Each case
 * runs with both kinds of store the shop offers, on the machine's PostgreSQL (`test` database) and Redis:
 *
 * - `PostgresStore`: the shop's `credits` table is created beforehand WITHOUT a unique constraint, so a
 *   payment credited twice would show as two rows.
 * - the Redis lease store: its credit guards itself with the unique paymentId (`on conflict do nothing`
 *   needs the constraint), so a double would show in the shop's tally as `caughtByDatabase`, the credits
 *   that got past the store; it must stay 0.
 *
 * Every case prints nothing but its figures, collected per store and printed at the end as one line.
 */
// The shared servers, by the variables every test reads (@service-pay/test-kit's testServers).
const POSTGRES_URL =
  process.env.TEST_POSTGRES_URL || process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
const REDIS_URL = process.env.TEST_REDIS_URL || 'redis://127.0.0.1:6379/0';

const stores = [
  { store: 'postgres', label: 'PostgresStore, credits without a unique constraint' },
  { store: 'redis', label: 'Redis lease store, credits guarded by the unique paymentId' },
] as const;

describe.each(stores)('reconciliation end to end: $label', ({ store }) => {
  const prefix = `reconcile_${store}_${process.pid}_${Date.now()}_`;
  const figures: Record<string, unknown> = { store };
  let db: pg.Client;
  let sim: Simulator;
  let shop: Awaited<ReturnType<typeof startExpressShop>>;
  let config: ReturnType<typeof simulatorShopConfig>;

  beforeAll(async () => {
    db = new pg.Client({ connectionString: POSTGRES_URL });
    await db.connect();
    if (store === 'postgres') {
      // The shop's credits table, but with no key at all: a second credit of a payment is a second row.
      await db.query(`create table ${prefix}credits (
        payment_id text not null, order_id text not null, amount text not null, source text not null,
        credited_at timestamptz not null default now())`);
    }
    const merchant = generateMerchant({ name: `reconcile-${store}` });
    // The spec's 8 attempts, on a fast clock: a webhook that fails every attempt gives up within a second.
    sim = await startSimulator({ merchants: [merchant], retry: { maxAttempts: 8, baseDelayMs: 20, factor: 1.5 } });
    config = simulatorShopConfig(sim.url, merchant, {
      databaseUrl: POSTGRES_URL,
      tablePrefix: prefix,
      redisUrl: store === 'redis' ? REDIS_URL : undefined,
    });
    shop = await startExpressShop(config);
  });

  afterAll(async () => {
    console.log('reconcile figures', JSON.stringify(figures));
    await shop?.close();
    await sim?.stop();
    if (db) {
      for (const table of ['credits', 'orders', 'service_pay_inbox'])
        await db.query(`drop table if exists ${prefix}${table}`);
      await db.end();
    }
    if (store === 'redis') {
      const redis = new Redis(REDIS_URL);
      const keys = await redis.keys(`${prefix}:*`);
      if (keys.length > 0) await redis.del(...keys);
      redis.disconnect();
    }
  });

  async function placeOrders(count: number, amount = '10.00'): Promise<Array<{ orderId: string; paymentId: string }>> {
    return Promise.all(
      Array.from({ length: count }, async () => {
        const res = await fetch(`${shop.url}/orders`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ amount, tokenSymbol: 'USDT' }),
        });
        expect(res.status).toBe(201);
        const body = (await res.json()) as { order: { id: string }; paymentId: string };
        return { orderId: body.order.id, paymentId: body.paymentId };
      }),
    );
  }

  /** Credit rows per order, read from the database (0 for an order never credited). */
  async function creditsOf(orderIds: string[]): Promise<number[]> {
    const { rows } = await db.query<{ order_id: string; n: string }>(
      `select order_id, count(*) as n from ${prefix}credits where order_id = any($1) group by order_id`,
      [orderIds],
    );
    const byOrder = new Map(rows.map((r) => [r.order_id, Number(r.n)]));
    return orderIds.map((id) => byOrder.get(id) ?? 0);
  }

  async function order(id: string): Promise<{ status: string; credits: number; creditedBy: string | null }> {
    return (await fetch(`${shop.url}/orders/${id}`)).json() as never;
  }

  /** Pays every payment with each webhook attempt failing, and waits for the sender to give up. */
  async function payAndLoseWebhooks(paymentIds: string[]): Promise<void> {
    await Promise.all(paymentIds.map((id) => sim.pay(id, { failAllAttempts: true })));
    await sim.waitForIdle({ timeoutMs: 30_000 });
    for (const id of paymentIds) {
      const [delivery] = sim.deliveries({ paymentId: id });
      expect(delivery?.state).toBe('failed');
      expect(delivery?.attempts.map((a) => a.outcome)).toEqual(Array(8).fill('endpoint-down'));
    }
  }

  /** A second credit that got past the store: a second row (PostgresStore) or one the unique key caught (Redis). */
  const storeLetThrough = () => shop.booted.tally.caughtByDatabase;

  it('all webhooks lost: the reconcile pass credits each payment once, a second pass finds them done', async () => {
    const placed = await placeOrders(5);
    const ids = placed.map((p) => p.paymentId);
    await payAndLoseWebhooks(ids);
    expect(await creditsOf(placed.map((p) => p.orderId))).toEqual([0, 0, 0, 0, 0]);

    const started = performance.now();
    const report = await shop.booted.reconcilePending({ olderThanMs: 0 });
    const passMs = performance.now() - started;
    const mine = report.results.filter((r) => ids.includes(r.paymentId));
    expect(mine.map((r) => r.outcome)).toEqual(Array(5).fill('credited'));
    expect(await creditsOf(placed.map((p) => p.orderId))).toEqual([1, 1, 1, 1, 1]);
    for (const p of placed) {
      expect(await order(p.orderId)).toMatchObject({ status: 'PAID', credits: 1, creditedBy: 'reconciliation' });
    }

    // The orders are no longer pending; read back anyway, every one is a duplicate.
    expect((await shop.booted.reconcilePending({ olderThanMs: 0 })).results.map((r) => r.paymentId)).not.toContain(
      ids[0],
    );
    const again = await shop.booted.reconciler.reconcileMany(ids);
    expect(again.counts).toMatchObject({ duplicate: 5, credited: 0 });
    expect(await creditsOf(placed.map((p) => p.orderId))).toEqual([1, 1, 1, 1, 1]);
    expect(storeLetThrough()).toBe(0);
    figures.recovery = {
      payments: 5,
      webhookAttemptsFailed: 40,
      reconciledCredited: mine.length,
      secondPass: again.counts.duplicate,
      passMs: Math.round(passMs),
    };
  });

  it('a webhook redelivered after a reconciliation is a 200 duplicate, and a reconciliation after a webhook too', async () => {
    const [lost, delivered] = (await placeOrders(2)) as [
      { orderId: string; paymentId: string },
      { orderId: string; paymentId: string },
    ];
    await payAndLoseWebhooks([lost.paymentId]);
    expect((await shop.booted.reconciler.reconcile(lost.paymentId)).outcome).toBe('credited');
    sim.redeliver(lost.paymentId);
    await sim.waitForIdle({ timeoutMs: 30_000 });
    const redelivery = sim.deliveries({ paymentId: lost.paymentId })[1];
    expect(redelivery?.attempts.map((a) => [a.status, a.responseBody])).toEqual([
      [200, '{"received":true,"duplicate":true}'],
    ]);

    await sim.pay(delivered.paymentId);
    await sim.waitForIdle({ timeoutMs: 30_000 });
    expect(await order(delivered.orderId)).toMatchObject({ status: 'PAID', credits: 1, creditedBy: 'webhook' });
    expect(await shop.booted.reconciler.reconcile(delivered.paymentId)).toMatchObject({
      outcome: 'duplicate',
      status: 'PAID',
    });
    expect(await creditsOf([lost.orderId, delivered.orderId])).toEqual([1, 1]);
    expect(storeLetThrough()).toBe(0);
  });

  it('webhooks and reconciliation racing on 100 payments: each credited exactly once', async () => {
    const placed = await placeOrders(100, '3.25');
    const ids = placed.map((p) => p.paymentId);
    const before = storeLetThrough();
    const started = performance.now();
    // Each payment: its webhook and a concurrent duplicate are sent as it is paid (the first attempt held
    // back 0-19 ms, so either side can win), and its reconciliation starts at that same moment.
    const results = await Promise.all(
      ids.map(async (id, i) => {
        await sim.pay(id, { duplicates: 1, concurrent: true, delayMs: i % 20 });
        return shop.booted.reconciler.reconcile(id);
      }),
    );
    await sim.waitForIdle({ timeoutMs: 60_000 });
    // Whatever the race left pending (a reconciliation that found the payment in progress while its
    // webhook failed, say) is what the next pass of the loop picks up.
    const sweep = await shop.booted.reconcilePending({ olderThanMs: 0 });
    const raceMs = performance.now() - started;

    const credits = await creditsOf(placed.map((p) => p.orderId));
    const orders = await Promise.all(placed.map((p) => order(p.orderId)));
    const attempts = ids.flatMap((id) => sim.deliveries({ paymentId: id }).flatMap((d) => d.attempts));
    const count = (outcome: string) => results.filter((r) => r.outcome === outcome).length;
    figures.race = {
      payments: 100,
      creditedByWebhook: orders.filter((o) => o.creditedBy === 'webhook').length,
      creditedByReconciliation: orders.filter((o) => o.creditedBy === 'reconciliation').length,
      reconcile: {
        credited: count('credited'),
        duplicate: count('duplicate'),
        inProgress: count('in-progress'),
        failed: count('failed'),
      },
      webhookAttempts: attempts.length,
      webhook200Credited: attempts.filter((a) => a.status === 200 && !a.responseBody?.includes('duplicate')).length,
      webhook200Duplicate: attempts.filter((a) => a.responseBody?.includes('duplicate')).length,
      webhook409: attempts.filter((a) => a.status === 409).length,
      webhookOther: attempts.filter((a) => a.status !== 200 && a.status !== 409).length,
      sweepCredited: sweep.counts.credited,
      double: credits.filter((n) => n > 1).length + (storeLetThrough() - before),
      lost: credits.filter((n) => n === 0).length,
      raceMs: Math.round(raceMs),
    };

    expect(credits).toEqual(Array(100).fill(1));
    expect(orders.every((o) => o.status === 'PAID')).toBe(true);
    expect(storeLetThrough() - before).toBe(0);
    // Every credit came from one side or the other, and each reconciliation that did not credit saw why.
    expect(orders.filter((o) => o.creditedBy !== null)).toHaveLength(100);
    expect(count('credited') + count('duplicate') + count('in-progress') + count('failed')).toBe(100);
    expect(count('credited')).toBe(
      orders.filter((o) => o.creditedBy === 'reconciliation').length - sweep.counts.credited,
    );
    // Above the 60 s the sender may take to go idle, plus placing 100 orders: on a loaded machine the test's
    // own waits, not a shorter test timeout, bound it.
  }, 120_000);

  it('a payment whose amount changed after it was credited is a conflict, never a second credit', async () => {
    const [byWebhook, byReconciliation] = (await placeOrders(2, '20.00')) as [
      { orderId: string; paymentId: string },
      { orderId: string; paymentId: string },
    ];
    // Credited by its webhook; then the service says another amount: reconciliation refuses it.
    await sim.pay(byWebhook.paymentId);
    await sim.waitForIdle({ timeoutMs: 30_000 });
    sim.amendPayment(byWebhook.paymentId, { amount: '25.00' });
    expect(await shop.booted.reconciler.reconcile(byWebhook.paymentId)).toMatchObject({
      outcome: 'conflict',
      code: 'PAYLOAD_CONFLICT',
      status: 'PAID',
    });

    // Credited by reconciliation; then a webhook carrying another amount: 422.
    await payAndLoseWebhooks([byReconciliation.paymentId]);
    expect((await shop.booted.reconciler.reconcile(byReconciliation.paymentId)).outcome).toBe('credited');
    sim.amendPayment(byReconciliation.paymentId, { amount: '25.00' });
    sim.redeliver(byReconciliation.paymentId);
    await sim.waitForIdle({ timeoutMs: 30_000 });
    const redelivery = sim.deliveries({ paymentId: byReconciliation.paymentId })[1];
    expect(redelivery?.attempts[0]?.status).toBe(422);
    expect(redelivery?.attempts[0]?.responseBody).toContain('PAYLOAD_CONFLICT');

    expect(await creditsOf([byWebhook.orderId, byReconciliation.orderId])).toEqual([1, 1]);
    const { rows } = await db.query(`select distinct amount from ${prefix}credits where order_id = any($1)`, [
      [byWebhook.orderId, byReconciliation.orderId],
    ]);
    expect(rows).toEqual([{ amount: '20.00' }]);
    expect(storeLetThrough()).toBe(0);
  });

  it('an unpaid payment is not-paid: nothing is credited, and the order stays pending', async () => {
    const [unpaid] = (await placeOrders(1, '7.00')) as [{ orderId: string; paymentId: string }];
    const result = await shop.booted.reconciler.reconcile(unpaid.paymentId);
    expect(result.outcome).toBe('not-paid');
    expect(result.status).not.toBe('PAID');
    const pass = await shop.booted.reconcilePending({ olderThanMs: 0 });
    expect(pass.results.find((r) => r.paymentId === unpaid.paymentId)?.outcome).toBe('not-paid');
    expect(await order(unpaid.orderId)).toMatchObject({ status: 'PENDING', credits: 0 });
    figures.unpaid = { outcome: result.outcome, status: result.status };
  });

  it('the service answering 503, then 429, for a while: the reads are retried, then credited', async () => {
    // Each case: payments whose webhooks were lost, read back while the merchant API refuses. With 4 reads
    // at once, every read is refused at least once, but the refusals are not shared evenly: one read can
    // meet 4 of the 6 429s. So this reconciler's client tries 7 times (the shop's default of 3 is for a
    // service that refuses now and then); it shares the shop's store and credit, as any reconciler must.
    const patientClient = createServiceClient({
      baseUrl: config.serviceUrl,
      apiKey: config.apiKey,
      apiSecret: config.apiSecret,
      retry: { maxAttempts: 7 },
    });
    const reconciler = createReconciler({
      getPayment: patientClient.getPayment,
      store: shop.booted.webhook.store,
      onPaymentPaid: shop.booted.webhook.onPaymentPaid,
    });
    const cases = [
      { name: '503 + Retry-After: 1, 4 refusals', fault: { status: 503, count: 4, retryAfterSec: 1 } },
      { name: '429 without Retry-After, 6 refusals', fault: { status: 429, count: 6 } },
      { name: '503 + Retry-After: 1 for 1.5 s', fault: { status: 503, durationMs: 1_500, retryAfterSec: 1 } },
    ] as const;
    const recovered: Record<string, unknown> = {};
    for (const c of cases) {
      const placed = await placeOrders(4, '11.00');
      const ids = placed.map((p) => p.paymentId);
      await payAndLoseWebhooks(ids);
      sim.failMerchantApi({ ...c.fault, method: 'GET' });
      const started = performance.now();
      const report = await reconciler.reconcileMany(ids, { concurrency: 4 });
      const ms = performance.now() - started;
      // Count-limited faults are used up: every refusal was met by a retry.
      expect(sim.merchantApiFault).toBeNull();
      expect(report.counts).toMatchObject({ credited: 4, failed: 0 });
      expect(await creditsOf(placed.map((p) => p.orderId))).toEqual([1, 1, 1, 1]);
      recovered[c.name] = { credited: report.counts.credited, ms: Math.round(ms) };
    }
    expect(storeLetThrough()).toBe(0);
    figures.retried = recovered;
  });
});
