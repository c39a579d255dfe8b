import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type BootedShop, bootShop } from '@service-pay/example-shop-kit';
import { generateMerchant, type Simulator, startSimulator } from '@service-pay/simulator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.js';

// The Express shop against the simulator, over real HTTP both ways.
let sim: Simulator;
let booted: BootedShop;
let server: Server;
let shopUrl = '';

beforeAll(async () => {
  const merchant = generateMerchant();
  sim = await startSimulator({ merchants: [merchant], retry: { baseDelayMs: 50 } });
  booted = await bootShop(
    {
      port: 0,
      publicUrl: undefined,
      serviceUrl: sim.url,
      apiKey: merchant.apiKey,
      apiSecret: merchant.apiSecret,
      webhookSecret: merchant.webhookSecret,
      redisUrl: undefined,
      databaseUrl: undefined,
      tablePrefix: '',
      failureRate: 0,
    },
    { notifyUrl: () => `${shopUrl}/webhooks/service`, logger: { warn: () => {}, error: () => {} } },
  );
  server = createApp(booted).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  shopUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await sim.stop();
  await booted.close();
});

async function placeOrder(amount: string, tokenSymbol = 'USDT') {
  const res = await fetch(`${shopUrl}/orders`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ amount, tokenSymbol }),
  });
  expect(res.status).toBe(201);
  return (await res.json()) as { order: { id: string }; paymentId: string };
}

const order = async (id: string) =>
  (await (await fetch(`${shopUrl}/orders/${id}`)).json()) as { status: string; credits: number };

describe('express-orders', () => {
  it('credits a paid order once', async () => {
    const placed = await placeOrder('42.00');
    expect(await order(placed.order.id)).toMatchObject({ status: 'PENDING', credits: 0 });
    await sim.pay(placed.paymentId);
    await sim.waitForIdle();
    expect(await order(placed.order.id)).toMatchObject({ status: 'PAID', credits: 1 });
  });

  it('credits once through duplicates, concurrent duplicates and a dropped answer', async () => {
    const placed = await Promise.all([placeOrder('1.50'), placeOrder('2.50'), placeOrder('3.50')]);
    await Promise.all([
      sim.pay(placed[0]!.paymentId, { duplicates: 3 }),
      sim.pay(placed[1]!.paymentId, { duplicates: 5, concurrent: true }),
      sim.pay(placed[2]!.paymentId, { dropResponses: 2, duplicates: 1 }),
    ]);
    await sim.waitForIdle();
    for (const p of placed) expect(await order(p.order.id)).toMatchObject({ status: 'PAID', credits: 1 });
    expect(sim.deliveries({ paymentId: placed[2]!.paymentId })[0]?.attempts.map((a) => a.outcome)).toEqual([
      'dropped',
      'dropped',
      'succeeded',
    ]);
  });

  it('rejects an underpayment for good: not credited, and the sender stops at once', async () => {
    const placed = await placeOrder('100.00');
    await sim.pay(placed.paymentId, { amount: '99.99' });
    await sim.waitForIdle();
    expect(await order(placed.order.id)).toMatchObject({ status: 'REJECTED', credits: 0 });
    const [delivery] = sim.deliveries({ paymentId: placed.paymentId });
    expect(delivery?.attempts).toHaveLength(1);
    expect(delivery?.attempts[0]?.responseBody).toContain('"rejected":true');
  });

  it('refuses a bad order with a coded 400 and keeps JSON parsing for its own routes', async () => {
    const res = await fetch(`${shopUrl}/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ amount: 12.5, tokenSymbol: 'USDT' }),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toBe('INVALID_ORDER');
    expect((await fetch(`${shopUrl}/orders/nope`)).status).toBe(404);
  });

  it('answers a forged webhook 401 and credits nothing', async () => {
    const placed = await placeOrder('5.00');
    const res = await fetch(`${shopUrl}/webhooks/service`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-service-signature': `t=${Math.floor(Date.now() / 1000)},v1=${'0'.repeat(64)}`,
      },
      body: JSON.stringify({ event: 'payment.paid', paymentId: placed.paymentId, orderNo: placed.order.id }),
    });
    expect(res.status).toBe(401);
    expect(await order(placed.order.id)).toMatchObject({ status: 'PENDING', credits: 0 });
  });
});
