import { generateMerchant, type Simulator, startSimulator } from '@service-pay/simulator';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectPostgres, dropTables, POSTGRES_URL } from '../support/postgres.js';
import { RedisServer } from '../support/redis-server.js';
import { ShopProcess } from '../support/shop-process.js';

/**
 * Chaos: payments from the simulator to two instances of the Express example (separate processes)
 * sharing one Redis dedupe store and one PostgreSQL, with 30% duplicate deliveries, 10% concurrent
 * duplicates, 10% of handler calls failing transiently, deliveries spread round-robin over both
 * instances, and the Redis server killed and restarted (empty) once mid-run. Every order must be credited
 * exactly once, none lost, in bounded time.
 *
 * CHAOS_PAYMENTS sets the size: 200 in the normal test run, 2,000 with `pnpm test:chaos`.
 */
const PAYMENTS = Number(process.env.CHAOS_PAYMENTS ?? 200);
const PLACE_CONCURRENCY = 32;

let redis: RedisServer;
let db: pg.Client;
let sim: Simulator;
let shops: ShopProcess[] = [];
const prefix = `chaos_${Date.now()}_${process.pid}_`;

beforeAll(async () => {
  db = await connectPostgres();
  redis = await RedisServer.start();
  const merchant = generateMerchant({ name: 'chaos' });
  sim = await startSimulator({
    merchants: [merchant],
    // The spec's 8 attempts with exponential backoff, on a faster clock: 0.1 s, 0.2 s, ... 6.4 s.
    retry: { maxAttempts: 8, baseDelayMs: 100, factor: 2, timeoutMs: 5_000 },
    faults: { duplicateRate: 0.3, concurrentDuplicateRate: 0.1 },
    seed: 20261121,
  });
  const env = {
    SERVICE_API_URL: sim.url,
    SERVICE_API_KEY: merchant.apiKey,
    SERVICE_API_SECRET: merchant.apiSecret,
    SERVICE_WEBHOOK_SECRET: merchant.webhookSecret,
    REDIS_URL: redis.url,
    DATABASE_URL: POSTGRES_URL,
    SHOP_TABLE_PREFIX: prefix,
    SHOP_CHAOS_FAILURE_RATE: '0.1',
  };
  // One after the other: the first creates the tables.
  shops = [await ShopProcess.start(env)];
  shops.push(await ShopProcess.start(env));
});

afterAll(async () => {
  await Promise.all(shops.map((s) => s.stop()));
  await sim?.stop();
  await redis?.kill();
  if (db) {
    await dropTables(db, prefix);
    await db.end();
  }
});

async function placeOrders(count: number): Promise<string[]> {
  const paymentIds: string[] = [];
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      const shop = shops[i % shops.length] as ShopProcess;
      const amount = `${1 + (i % 500)}.${String(i % 100).padStart(2, '0')}`;
      const res = await fetch(`${shop.url}/orders`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ amount, tokenSymbol: i % 3 === 0 ? 'USDC' : 'USDT' }),
      });
      if (res.status !== 201) throw new Error(`placing order ${i} answered ${res.status}: ${await res.text()}`);
      paymentIds.push(((await res.json()) as { paymentId: string }).paymentId);
    }
  };
  await Promise.all(Array.from({ length: PLACE_CONCURRENCY }, worker));
  return paymentIds;
}

describe(`chaos: ${PAYMENTS} payments, two instances, one Redis crash and restart`, () => {
  it('credits every order exactly once, loses none, in bounded time', async () => {
    const started = Date.now();
    const paymentIds = await placeOrders(PAYMENTS);
    const placedMs = Date.now() - started;
    const deliverTo = shops.map((s) => `${s.url}/webhooks/service`);

    // Pay in a steady stream of 40 batches over about 3 s; halfway through, Redis is killed and comes
    // back empty 0.5 s later, so deliveries land before, during and after the outage.
    const batches = 40;
    const batchSize = Math.ceil(PAYMENTS / batches);
    let restart: Promise<void> | undefined;
    for (let b = 0; b < batches; b++) {
      if (b === batches / 2) restart = redis.restart(500);
      await Promise.all(paymentIds.slice(b * batchSize, (b + 1) * batchSize).map((id) => sim.pay(id, { deliverTo })));
      await new Promise((r) => setTimeout(r, 75));
    }
    await restart;
    await sim.waitForIdle({ timeoutMs: 300_000 });
    const wallMs = Date.now() - started;

    const { rows } = await db.query<{ id: string; status: string; credits: string }>(
      `select o.id, o.status, count(c.payment_id) as credits
       from ${prefix}orders o left join ${prefix}credits c on c.order_id = o.id group by o.id, o.status`,
    );
    const deliveries = sim.deliveries();
    const attempts = deliveries.flatMap((d) => d.attempts);
    const statusCount = (status: number) => attempts.filter((a) => a.status === status).length;
    const stats = await Promise.all(shops.map((s) => s.stats()));
    const sum = (key: keyof (typeof stats)[number]) => stats.reduce((n, s) => n + s[key], 0);
    const figures = {
      payments: PAYMENTS,
      deliveries: deliveries.length,
      duplicates: deliveries.filter((d) => d.kind === 'duplicate').length,
      concurrentDuplicates: deliveries.filter((d) => d.kind === 'concurrent-duplicate').length,
      attempts: attempts.length,
      credits: rows.reduce((n, r) => n + Number(r.credits), 0),
      creditsWrittenByHandlers: sum('credited'),
      caughtByDatabaseGuard: sum('caughtByDatabase'),
      answered200: statusCount(200),
      answered409: statusCount(409),
      answered503: statusCount(503),
      answered500InjectedFailures: statusCount(500),
      failedDeliveries: deliveries.filter((d) => d.state !== 'succeeded').length,
      placeOrdersSec: Number((placedMs / 1000).toFixed(1)),
      wallTimeSec: Number((wallMs / 1000).toFixed(1)),
    };
    console.log(`chaos figures: ${JSON.stringify(figures, null, 2)}`);

    expect(rows).toHaveLength(PAYMENTS); // no order lost
    const notExactlyOnce = rows.filter((r) => Number(r.credits) !== 1 || r.status !== 'PAID');
    expect(notExactlyOnce).toEqual([]);
    expect(figures.creditsWrittenByHandlers).toBe(PAYMENTS); // each credit written once, across both processes
    // The run really was chaotic: the faults happened.
    expect(figures.duplicates + figures.concurrentDuplicates).toBeGreaterThan(PAYMENTS * 0.25);
    expect(figures.answered500InjectedFailures).toBeGreaterThan(0);
    expect(figures.answered503).toBeGreaterThan(0);
    expect(wallMs).toBeLessThan(540_000);
  });
});
