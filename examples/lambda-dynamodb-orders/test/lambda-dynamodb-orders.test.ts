import { randomUUID } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { type ShopConfig, simulatorShopConfig } from '@service-pay/example-shop-kit';
import { describeShop } from '@service-pay/example-shop-kit/testing';
import { generateMerchant, type Simulator, startSimulator } from '@service-pay/simulator';
import { type DynamoDbLocal, startDynamoDbLocal } from '@service-pay/test-kit/dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { creditOrder } from '../src/credit.ts';
import { createShopFunction, type HttpApiEvent, handler, shopFromEnv } from '../src/handler.ts';
import type { DynamoDbShop } from '../src/shop.ts';
import { createShopTables, tablesFromEnv } from '../src/tables.ts';
import { startApiGateway } from './support/api-gateway.ts';

let emulator: DynamoDbLocal;

beforeAll(async () => {
  emulator = await startDynamoDbLocal();
});
afterAll(async () => {
  await emulator?.stop();
});

/** The environment the function is deployed with; the shop's tables get a prefix of their own per run. */
function environment(config: ShopConfig, publicUrl: string, prefix: string): Record<string, string> {
  return {
    SERVICE_API_URL: config.serviceUrl,
    SERVICE_API_KEY: config.apiKey,
    SERVICE_API_SECRET: config.apiSecret,
    SERVICE_WEBHOOK_SECRET: config.webhookSecret,
    PUBLIC_URL: publicUrl,
    DYNAMODB_ENDPOINT: emulator.endpoint,
    SHOP_TABLE_PREFIX: prefix,
  };
}

/**
 * The function behind the local API Gateway, its tables made first (as a deployment's infrastructure code
 * would). The gateway's URL is known once it listens, and the function reads its environment on its first
 * event: so the environment is given then.
 */
async function startShop(config: ShopConfig, fn: { handler: (event: HttpApiEvent) => Promise<unknown> } = { handler }) {
  const prefix = `shop_${randomUUID().slice(0, 8)}`;
  const client = new DynamoDBClient({
    endpoint: emulator.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  await createShopTables(client, tablesFromEnv({ SHOP_TABLE_PREFIX: prefix }));
  client.destroy();
  const env: Record<string, string> = {};
  const gateway = await startApiGateway(fn, env);
  Object.assign(env, environment(config, gateway.url, prefix));
  return { ...gateway, env };
}

// The scenarios every example shop passes (duplicates, concurrent duplicates, dropped answers, a rejected
// underpayment, bad orders, a forged webhook), over real HTTP both ways.
// The function module's own entry point (`handler.handler`), which opens the shop on its first event.
describeShop('lambda-dynamodb-orders (lambda-local behind a local HTTP API, DynamoDB Local)', (config) =>
  startShop(config),
);

describe('lambda-dynamodb-orders: the credit queued on ctx.tx commits with the record, or not at all', () => {
  let sim: Simulator;
  let running: Awaited<ReturnType<typeof startShop>>;
  let shop: DynamoDbShop | undefined;
  const failedAfterQueueing = new Set<string>();

  beforeAll(async () => {
    const merchant = generateMerchant();
    sim = await startSimulator({ merchants: [merchant], retry: { baseDelayMs: 50 } });
    // A function of the same parts whose credit fails on each payment's first attempt, after queueing the
    // credit: nothing is written, and the retry credits.
    let run: ((event: HttpApiEvent) => Promise<unknown>) | undefined;
    const fn = {
      handler: (event: HttpApiEvent) => {
        if (run === undefined) {
          shop = shopFromEnv(process.env, {
            credit: (deps) => {
              const credit = creditOrder(deps);
              return async (payment, ctx) => {
                await credit(payment, ctx);
                if (ctx.source === 'webhook' && !failedAfterQueueing.has(payment.paymentId)) {
                  failedAfterQueueing.add(payment.paymentId);
                  throw new Error('failed after queueing the credit');
                }
              };
            },
          });
          run = createShopFunction(shop);
        }
        return run(event);
      },
    };
    running = await startShop(simulatorShopConfig(sim.url, merchant), fn);
  });

  afterAll(async () => {
    await running?.close();
    shop?.close();
    await sim?.stop();
  });

  const placeOrder = async (amount: string) => {
    const res = await fetch(`${running.url}/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ amount, tokenSymbol: 'USDT' }),
    });
    expect(res.status).toBe(201);
    return (await res.json()) as { order: { id: string }; paymentId: string };
  };
  const order = async (id: string) =>
    (await (await fetch(`${running.url}/orders/${id}`)).json()) as { status: string; credits: number };

  it('credits once when the first attempt fails after queueing its credit', async () => {
    const placed = await Promise.all(['10.00', '20.00', '30.00'].map(placeOrder));
    await Promise.all(placed.map((p) => sim.pay(p.paymentId, { duplicates: 2, concurrent: true })));
    await sim.waitForIdle();
    for (const p of placed) {
      expect(failedAfterQueueing.has(p.paymentId)).toBe(true);
      expect(await order(p.order.id)).toMatchObject({ status: 'PAID', credits: 1 });
    }
  });

  it('credits by reconciliation a payment whose webhooks all failed, and its redelivery is a duplicate', async () => {
    const { order: placed, paymentId } = await placeOrder('7.25');
    await sim.pay(paymentId, { failAllAttempts: true });
    await sim.waitForIdle();
    expect(await order(placed.id)).toMatchObject({ status: 'PENDING', credits: 0 });

    if (shop === undefined) throw new Error('the function has not run yet');
    const report = await shop.reconcilePending({ olderThanMs: 0 });
    expect(report.results.find((r) => r.paymentId === paymentId)?.outcome).toBe('credited');
    expect(await order(placed.id)).toMatchObject({ status: 'PAID', credits: 1 });

    await sim.redeliver(paymentId);
    await sim.waitForIdle();
    expect(await order(placed.id)).toMatchObject({ status: 'PAID', credits: 1 });
    expect(
      (await shop.reconcilePending({ olderThanMs: 0 })).results.find((r) => r.paymentId === paymentId),
    ).toBeUndefined();
  });
});
