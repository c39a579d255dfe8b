import { createServiceClient, type ServiceClient } from '@service-pay/client';
import { compareAmounts, toRawAmount } from '@service-pay/core';
import { afterEach, describe, expect, it } from 'vitest';
import { generateMerchant, SimulatorError, startSimulator } from '../src/index.js';
import { input, setup } from './support/fixtures.js';
import { type Receiver, startReceiver } from './support/receiver.js';

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(cleanup.splice(0).map((f) => f()));
});

async function world(options: Parameters<typeof setup>[0] = {}) {
  const s = await setup(options);
  const receiver = await startReceiver({ secret: s.merchant.webhookSecret });
  cleanup.push(
    () => s.sim.stop(),
    () => receiver.close(),
  );
  const notifyUrl = `${receiver.url}/webhooks/service`;
  const create = (overrides: object = {}) => s.client.createPayment(input({ notifyUrl, ...overrides }));
  return { ...s, receiver, notifyUrl, create };
}

function only<T>(items: T[]): T {
  expect(items).toHaveLength(1);
  return items[0] as T;
}

describe('payment.paid delivery, verified by a receiver built on core createWebhookHandler', () => {
  it('pays, confirms to the threshold, and delivers one signed webhook the receiver accepts', async () => {
    const { sim, receiver, create } = await world({ merchant: { confirmations: 5 } });
    const payment = await create({ amount: '7.25' });
    const { payment: paid, deliveryIds } = await sim.pay(payment.paymentId, {
      txId: 'ab'.repeat(32),
      network: 'TRON',
      blockNum: '123',
    });
    expect(paid).toMatchObject({
      status: 'PAID',
      confirmations: 5,
      requiredConfirmations: 5,
      txId: 'ab'.repeat(32),
      blockNum: '123',
    });
    await sim.waitForIdle();

    const request = only(receiver.requests);
    expect(request.status).toBe(200);
    expect(request.answer).toBe('{"received":true}');
    expect(request.headers['x-service-event']).toBe('payment.paid');
    expect(request.headers['x-service-delivery']).toBe(deliveryIds[0]);
    expect(request.headers['x-service-delivery']).toMatch(/^dl_[0-9a-f]{24}$/);
    expect(request.headers['x-service-signature']).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(request.headers['content-type']).toBe('application/json');

    const event = only(receiver.handled);
    expect(event).toEqual({
      event: 'payment.paid',
      paymentId: payment.paymentId,
      orderNo: payment.orderNo,
      txId: 'ab'.repeat(32),
      tokenSymbol: 'USDT',
      paymentNetwork: 'TRON',
      amount: '7.25',
      amountRaw: '7250000',
      blockNum: '123',
      confirmations: 5,
      paidAt: paid.paidAt,
    });
    expect(Object.keys(JSON.parse(request.body))).toEqual([
      'event',
      'paymentId',
      'orderNo',
      'txId',
      'tokenSymbol',
      'paymentNetwork',
      'amount',
      'amountRaw',
      'blockNum',
      'confirmations',
      'paidAt',
    ]);

    const delivery = only(sim.deliveries({ paymentId: payment.paymentId }));
    expect(delivery).toMatchObject({
      deliveryId: deliveryIds[0],
      kind: 'original',
      state: 'succeeded',
      url: payment.notifyUrl,
      body: request.body,
    });
    const attempt = only(delivery.attempts);
    expect(attempt).toMatchObject({
      attempt: 1,
      status: 200,
      error: null,
      outcome: 'succeeded',
      nextRetryInMs: null,
      responseBody: '{"received":true}',
    });
    expect(attempt.latencyMs).toBeGreaterThanOrEqual(0);
  });

  it('uses the defaults: random txId, TRON, next block, amountRaw from the token decimals', async () => {
    const { sim, receiver, create } = await world();
    const a = await create({ amount: '1.5' });
    const b = await create({ tokenSymbol: 'ETH', amount: '0.000000000000000002' });
    await sim.pay(a.paymentId);
    await sim.pay(b.paymentId);
    await sim.waitForIdle();
    const [ea, eb] = receiver.handled;
    expect(ea).toMatchObject({ paymentNetwork: 'TRON', amountRaw: toRawAmount('1.5', 6), confirmations: 2 });
    expect(ea?.txId).toMatch(/^[0-9a-f]{64}$/);
    expect(eb).toMatchObject({ amountRaw: '2' });
    expect(BigInt(eb?.blockNum as string)).toBe(BigInt(ea?.blockNum as string) + 1n);
  });

  it('carries an underpaid amount as paid, so the shop can reject it', async () => {
    const { sim, receiver, create } = await world();
    const payment = await create({ amount: '10' });
    await sim.pay(payment.paymentId, { amount: '9.99' });
    await sim.waitForIdle();
    const event = only(receiver.handled);
    expect(compareAmounts(event.amount, payment.amount)).toBe(-1);
    expect(event.amountRaw).toBe('9990000');
    expect(sim.payment(payment.paymentId)).toMatchObject({ amount: '10', paidAmount: '9.99' });
  });

  it('sends blockNum and confirmations null without an on-chain record', async () => {
    const { sim, receiver, create } = await world();
    const payment = await create();
    await sim.pay(payment.paymentId, { blockNum: null });
    await sim.waitForIdle();
    expect(only(receiver.handled)).toMatchObject({ blockNum: null, confirmations: null });
  });

  it('climbs one confirmation per interval and stays PENDING until the threshold', async () => {
    const { sim, client, receiver, create } = await world({
      merchant: { confirmations: 3 },
      confirmationIntervalMs: 150,
    });
    const payment = await create();
    const paying = sim.pay(payment.paymentId);
    // Loose timing: wait for the first confirmation; two more intervals remain before PAID.
    await expect
      .poll(async () => (await client.getPayment(payment.paymentId)).confirmations, { interval: 20 })
      .toBeGreaterThanOrEqual(1);
    const midway = await client.getPayment(payment.paymentId);
    expect(midway.status).toBe('PENDING');
    expect(midway.confirmations).toBeLessThan(3);
    expect(receiver.requests).toHaveLength(0);
    await expect(sim.pay(payment.paymentId)).rejects.toMatchObject({ code: 'PAYMENT_ALREADY_PAID' });
    await paying;
    await sim.waitForIdle();
    expect(only(receiver.handled).confirmations).toBe(3);
  });

  it('a confirming payment does not expire', async () => {
    let now = Date.now();
    const { sim, client, create } = await world({ confirmationIntervalMs: 20, now: () => now });
    const payment = await create({ expireSec: 1 });
    const paying = sim.pay(payment.paymentId);
    now += 5_000;
    await expect(client.getPayment(payment.paymentId)).resolves.toMatchObject({ status: 'PENDING' });
    await paying;
    await expect(client.getPayment(payment.paymentId)).resolves.toMatchObject({ status: 'PAID' });
  });

  it('refuses to pay an expired, paid or unknown payment, with codes', async () => {
    let now = Date.now();
    const { sim, create } = await world({ now: () => now });
    const a = await create({ expireSec: 10 });
    const b = await create();
    await sim.pay(b.paymentId);
    now += 10_000;
    await expect(sim.pay(a.paymentId)).rejects.toMatchObject({ code: 'PAYMENT_EXPIRED', status: 409 });
    await expect(sim.pay(b.paymentId)).rejects.toMatchObject({ code: 'PAYMENT_ALREADY_PAID', status: 409 });
    await expect(sim.pay('p_nope')).rejects.toMatchObject({ code: 'PAYMENT_NOT_FOUND', status: 404 });
    await expect(sim.pay(b.paymentId, { bogus: 1 } as never)).rejects.toBeInstanceOf(SimulatorError);
  });

  it.each([
    [{ amount: 1 }, /amount/],
    [{ amount: '1.1234567' }, /fraction digits/],
    [{ amountRaw: '1.5' }, /amountRaw/],
    [{ blockNum: 5 }, /blockNum/],
    [{ txId: '' }, /txId/],
    [{ duplicates: -1 }, /duplicates/],
    [{ dropResponses: 9 }, /dropResponses/],
    [{ concurrent: 'yes' }, /concurrent/],
    [{ clockSkewSec: 1.5 }, /clockSkewSec/],
    [{ deliverTo: ['ftp://x'] }, /deliverTo/],
    [{ deliverTo: [] }, /deliverTo/],
    [{ surprise: true }, /Unknown option "surprise"/],
    ['nope', /object/],
  ])('refuses pay options %j with INVALID_PAY_OPTIONS and leaves the payment PENDING', async (options, message) => {
    const { sim, create } = await world();
    const payment = await create();
    await expect(sim.pay(payment.paymentId, options as never)).rejects.toMatchObject({
      code: 'INVALID_PAY_OPTIONS',
      message: expect.stringMatching(message),
    });
    expect(sim.payment(payment.paymentId)?.status).toBe('PENDING');
  });

  it('redelivers a paid payment: same body, fresh dl_ id; the receiver answers duplicate', async () => {
    const { sim, receiver, create } = await world();
    const payment = await create();
    expect(() => sim.redeliver(payment.paymentId)).toThrow(expect.objectContaining({ code: 'PAYMENT_NOT_PAID' }));
    const {
      deliveryIds: [first],
    } = await sim.pay(payment.paymentId);
    await sim.waitForIdle();
    const [again] = sim.redeliver(payment.paymentId);
    await sim.waitForIdle();
    expect(again).not.toBe(first);
    expect(receiver.requests.map((r) => [r.deliveryId, r.answer])).toEqual([
      [first, '{"received":true}'],
      [again, '{"received":true,"duplicate":true}'],
    ]);
    expect(receiver.requests[0]?.body).toBe(receiver.requests[1]?.body);
    expect(receiver.handled).toHaveLength(1);
    expect(sim.delivery(again as string)?.kind).toBe('redelivery');
  });

  it('expire() ends a pending payment; paid ones cannot expire', async () => {
    const { sim, client, create } = await world();
    const a = await create();
    const b = await create();
    expect(sim.expire(a.paymentId).status).toBe('EXPIRED');
    await expect(client.getPayment(a.paymentId)).resolves.toMatchObject({ status: 'EXPIRED' });
    await sim.pay(b.paymentId);
    expect(() => sim.expire(b.paymentId)).toThrow(expect.objectContaining({ code: 'PAYMENT_ALREADY_PAID' }));
  });

  it('delivers 200 payments for two merchants in parallel, each signed with its own webhook secret', async () => {
    const merchants = [generateMerchant({ confirmations: 1 }), generateMerchant({ confirmations: 4 })];
    const sim = await startSimulator({ merchants, retry: { baseDelayMs: 10 } });
    const receivers = await Promise.all(merchants.map((m) => startReceiver({ secret: m.webhookSecret })));
    cleanup.push(() => sim.stop(), ...receivers.map((r) => () => r.close()));
    const clients = merchants.map((m) =>
      createServiceClient({ baseUrl: sim.url, apiKey: m.apiKey, apiSecret: m.apiSecret }),
    );
    const payments = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        (clients[i % 2] as ServiceClient).createPayment(input({ notifyUrl: (receivers[i % 2] as Receiver).url })),
      ),
    );
    await Promise.all(payments.map((p) => sim.pay(p.paymentId)));
    await sim.waitForIdle();
    for (const [i, receiver] of receivers.entries()) {
      expect(receiver.requests).toHaveLength(100);
      expect(receiver.requests.every((r) => r.status === 200)).toBe(true);
      expect(receiver.handled).toHaveLength(100);
      expect(receiver.handled.every((e) => e.confirmations === [1, 4][i])).toBe(true);
    }
    expect(sim.deliveries({ state: 'succeeded' })).toHaveLength(200);
  });
});
