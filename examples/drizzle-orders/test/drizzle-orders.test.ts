import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import type { WebhookLogger } from '@service-pay/core';
import { type ShopConfig, simulatorShopConfig } from '@service-pay/example-shop-kit';
import { describeShop } from '@service-pay/example-shop-kit/testing';
import { generateMerchant, type Simulator, startSimulator } from '@service-pay/simulator';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.ts';
import type { CreditPayment } from '../src/credit.ts';
import { creditOrder } from '../src/credit.ts';
import { type DrizzleShop, openShop } from '../src/shop.ts';

// The shared PostgreSQL, by the variable every test reads (@service-pay/test-kit's testServers).
const POSTGRES_URL =
  process.env.TEST_POSTGRES_URL || process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';

/**
 * A PostgreSQL URL whose tables live in a schema of their own: each simulator numbers its payments from
 * the start, so two runs sharing one set of tables would find each other's payments in the inbox.
 */
async function ownSchemaUrl(): Promise<{ url: string; drop: () => Promise<void> }> {
  const schema = `drizzle_shop_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  await admin.end();
  const url = `${POSTGRES_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
  const drop = async () => {
    const client = new pg.Client({ connectionString: POSTGRES_URL });
    await client.connect();
    await client.query(`drop schema ${schema} cascade`);
    await client.end();
  };
  return { url, drop };
}

/** Console output of the deliveries the tests fail on purpose, kept out of the test log. */
const quiet: WebhookLogger = { warn: () => {}, error: () => {} };

/** The shop on a real HTTP server (on PostgreSQL: in a schema of its own); `credit` replaces its credit. */
async function startShop(config: ShopConfig, credit?: CreditPayment) {
  const postgres = config.databaseUrl === undefined ? undefined : await ownSchemaUrl();
  let url = '';
  const shop = await openShop(
    { ...config, databaseUrl: postgres?.url },
    { notifyUrl: () => `${url}/webhooks/service`, ...(credit && { credit, logger: quiet }) },
  );
  const server = serve({ fetch: buildApp(shop).fetch, port: 0, hostname: '127.0.0.1' });
  await new Promise((resolve) => server.once('listening', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const close = async () => {
    await new Promise((resolve) => server.close(resolve));
    await shop.close();
    await postgres?.drop();
  };
  return { url, shop, close };
}

// The scenarios every example shop passes (duplicates, concurrent duplicates, dropped answers, a rejected
// underpayment, bad orders, a forged webhook), over real HTTP both ways, on both of the shop's databases.
describeShop('drizzle-orders (PGlite)', (config) => startShop(config));
describeShop('drizzle-orders (PostgreSQL)', (config) => startShop({ ...config, databaseUrl: POSTGRES_URL }));

describe.each([
  ['PGlite', undefined],
  ['PostgreSQL', POSTGRES_URL],
])(
  'drizzle-orders on %s: the credit written with Drizzle commits with the record, or not at all',
  (_name, databaseUrl) => {
    let sim: Simulator;
    let running: Awaited<ReturnType<typeof startShop>>;
    let shop: DrizzleShop;
    /** Payments whose first attempt wrote its credit and then failed. */
    const failedAfterWriting = new Set<string>();

    beforeAll(async () => {
      const merchant = generateMerchant();
      sim = await startSimulator({ merchants: [merchant], retry: { baseDelayMs: 50 } });
      // The first attempt of each payment writes its credit, then fails (as a crash or a lost connection
      // after the insert would): the store rolls the credit back with everything else, the retry credits.
      const credit: CreditPayment = async (payment, ctx) => {
        await creditOrder(payment, ctx);
        if (ctx.source === 'webhook' && !failedAfterWriting.has(payment.paymentId)) {
          failedAfterWriting.add(payment.paymentId);
          throw new Error('failed after writing the credit');
        }
      };
      running = await startShop(simulatorShopConfig(sim.url, merchant, { databaseUrl }), credit);
      shop = running.shop;
    });

    afterAll(async () => {
      await running?.close();
      await sim?.stop();
    });

    it('credits once when the first attempt fails after writing its credit', async () => {
      const placed = await Promise.all(
        ['10.00', '20.00', '30.00'].map((amount) => shop.placeOrder({ amount, tokenSymbol: 'USDT' })),
      );
      await Promise.all(placed.map((p) => sim.pay(p.paymentId, { duplicates: 2, concurrent: true })));
      await sim.waitForIdle();
      for (const p of placed) {
        expect(failedAfterWriting.has(p.paymentId)).toBe(true);
        expect(await shop.getOrder(p.order.id)).toMatchObject({ status: 'PAID', credits: 1 });
        const outcomes = sim.deliveries({ paymentId: p.paymentId }).flatMap((d) => d.attempts.map((a) => a.outcome));
        expect(outcomes).toContain('http-error');
      }
    });

    it('credits by reconciliation a payment whose webhooks all failed, and its redelivery is a duplicate', async () => {
      const { order, paymentId } = await shop.placeOrder({ amount: '7.25', tokenSymbol: 'USDT' });
      await sim.pay(paymentId, { failAllAttempts: true });
      await sim.waitForIdle();
      expect(await shop.getOrder(order.id)).toMatchObject({ status: 'PENDING', credits: 0 });

      const report = await shop.reconcilePending({ olderThanMs: 0 });
      expect(report.results.find((r) => r.paymentId === paymentId)?.outcome).toBe('credited');
      expect(await shop.getOrder(order.id)).toMatchObject({ status: 'PAID', credits: 1 });

      await sim.redeliver(paymentId);
      await sim.waitForIdle();
      expect(await shop.getOrder(order.id)).toMatchObject({ status: 'PAID', credits: 1 });
      expect(
        (await shop.reconcilePending({ olderThanMs: 0 })).results.find((r) => r.paymentId === paymentId),
      ).toBeUndefined();
    });
  },
);
