import { ServiceApiError } from '@service-pay/client';
import { afterEach, describe, expect, it } from 'vitest';
import { SimulatorError } from '../src/index.js';
import { input, setup, signedFetch } from './support/fixtures.js';
import { startReceiver } from './support/receiver.js';

// What reconciliation and client-retry tests need from the simulator: an endpoint
// down for a payment's whole retry window, amended payments, the spec's fields on GET, and a merchant API
// that answers 503 or 429 for a while.

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(cleanup.splice(0).map((f) => f()));
});

async function world(options: Parameters<typeof setup>[0] = {}) {
  const s = await setup({ retry: { baseDelayMs: 1, maxAttempts: 4 }, ...options });
  const receiver = await startReceiver({ secret: s.merchant.webhookSecret });
  cleanup.push(
    () => s.sim.stop(),
    () => receiver.close(),
  );
  const create = (overrides: object = {}) => s.client.createPayment(input({ notifyUrl: receiver.url, ...overrides }));
  return { ...s, receiver, create };
}

describe('failAllAttempts: the endpoint is down for the whole retry window', () => {
  it('fails every attempt without a request, on the retry schedule, and ends failed after the last', async () => {
    const { sim, receiver, create } = await world();
    const payment = await create();
    const { deliveryIds } = await sim.pay(payment.paymentId, { failAllAttempts: true, duplicates: 1 });
    await sim.waitForIdle();
    const log = sim.deliveries({ paymentId: payment.paymentId });
    expect(log.map((d) => [d.deliveryId, d.state])).toEqual(deliveryIds.map((id) => [id, 'failed']));
    for (const d of log) {
      expect(d.attempts.map((a) => [a.outcome, a.status, a.latencyMs])).toEqual(
        Array(4).fill(['endpoint-down', null, 0]),
      );
      expect(d.attempts.map((a) => a.nextRetryInMs)).toEqual([1, 2, 4, null]);
      expect(d.attempts[0]?.error).toMatch(/endpoint down/);
    }
    expect(receiver.requests).toEqual([]);
    // The payment is PAID all the same: what a reconciler reads.
    expect(sim.payment(payment.paymentId)?.status).toBe('PAID');
  });

  it('a redelivery after the outage reaches the app (only that call was down)', async () => {
    const { sim, receiver, create } = await world();
    const payment = await create();
    await sim.pay(payment.paymentId, { failAllAttempts: true });
    await sim.waitForIdle();
    sim.redeliver(payment.paymentId);
    await sim.waitForIdle();
    expect(receiver.handled.map((e) => e.paymentId)).toEqual([payment.paymentId]);
  });

  it('refuses a non-boolean', async () => {
    const { sim, create } = await world();
    const payment = await create();
    await expect(sim.pay(payment.paymentId, { failAllAttempts: 'yes' as never })).rejects.toMatchObject({
      code: 'INVALID_PAY_OPTIONS',
      message: expect.stringMatching(/failAllAttempts/),
    });
  });
});

describe('delayMs: a slow sender', () => {
  it('holds the delivery scheduled, with nothing sent, until the delay is over', async () => {
    const { sim, receiver, create } = await world();
    const held = await create();
    const [heldId] = (await sim.pay(held.paymentId, { delayMs: 600_000 })).deliveryIds;
    const quick = await create();
    await sim.pay(quick.paymentId, { delayMs: 5 });
    await expect.poll(() => sim.deliveries({ paymentId: quick.paymentId })[0]?.state).toBe('succeeded');
    expect(sim.delivery(heldId as string)).toMatchObject({ state: 'scheduled', attempts: [] });
    expect(receiver.requests.map((r) => r.deliveryId)).not.toContain(heldId);
    await sim.stop(); // clears the ten-minute timer
    expect(sim.delivery(heldId as string)?.state).toBe('cancelled');
  });

  it('refuses a delay over ten minutes', async () => {
    const { sim, create } = await world();
    const payment = await create();
    expect(() => sim.redeliver(payment.paymentId, { delayMs: 600_001 })).toThrow(
      expect.objectContaining({ code: 'INVALID_PAY_OPTIONS', message: expect.stringMatching(/delayMs/) }),
    );
  });
});

describe('GET /v1/payments/:id of a PAID payment', () => {
  it('has every field of spec 2.2, as created, plus the payment facts', async () => {
    const { sim, client, create } = await world();
    const created = await create({ amount: '7.25', tokenSymbol: 'USDC', expireSec: 120 });
    await sim.pay(created.paymentId, { txId: 'tx-read-1' });
    const read = await client.getPayment(created.paymentId);
    expect(read).toMatchObject({
      paymentId: created.paymentId,
      status: 'PAID',
      orderNo: created.orderNo,
      tokenSymbol: 'USDC',
      amount: '7.25',
      expireSec: 120,
      notifyUrl: created.notifyUrl,
      txId: 'tx-read-1',
      paidAmount: '7.25',
      amountRaw: '7250000',
      paymentNetwork: 'TRON',
    });
    expect(read.paymentId).toMatch(/^p_/);
    expect(typeof read.expireSec).toBe('number');
    expect(Date.parse(read.paidAt as string)).not.toBeNaN();
  });
});

describe('amendPayment: the service changes its story (conflict tests)', () => {
  it('a paid payment: GET shows the new amount at once, a redelivery carries it, the app answers 422', async () => {
    const { sim, client, receiver, create } = await world();
    const payment = await create({ amount: '12.50' });
    await sim.pay(payment.paymentId);
    await sim.waitForIdle();
    const amended = sim.amendPayment(payment.paymentId, { amount: '99.00' });
    expect(amended).toMatchObject({ amount: '99.00', paidAmount: '99.00', amountRaw: '99000000', status: 'PAID' });
    await expect(client.getPayment(payment.paymentId)).resolves.toMatchObject({ amount: '99.00' });

    const [again] = sim.redeliver(payment.paymentId);
    await sim.waitForIdle();
    const delivery = sim.delivery(again as string);
    expect(JSON.parse(delivery?.body as string)).toMatchObject({ amount: '99.00', amountRaw: '99000000' });
    // The first delivery keeps the body it sent.
    expect(JSON.parse(sim.deliveries({ paymentId: payment.paymentId })[0]?.body as string).amount).toBe('12.50');
    expect(delivery?.attempts[0]?.status).toBe(422);
    expect(JSON.parse(delivery?.attempts[0]?.responseBody as string).error).toBe('PAYLOAD_CONFLICT');
    expect(receiver.handled).toHaveLength(1);
  });

  it('changes txId, network, token and order number; the order index follows', async () => {
    const { sim, create } = await world();
    const payment = await create({ orderNo: 'before' });
    await sim.pay(payment.paymentId);
    const amended = sim.amendPayment(payment.paymentId, {
      orderNo: 'after',
      txId: 'tx-2',
      network: 'ETH',
      tokenSymbol: 'DAI',
    });
    expect(amended).toMatchObject({ orderNo: 'after', txId: 'tx-2', paymentNetwork: 'ETH', tokenSymbol: 'DAI' });
    // DAI has 18 decimals: amountRaw follows the token.
    expect(amended.amountRaw).toBe('12500000000000000000');
    // The old order number is free again, the new one taken.
    await expect(create({ orderNo: 'before' })).resolves.toMatchObject({ orderNo: 'before' });
    await expect(create({ orderNo: 'after' })).rejects.toMatchObject({ code: 'DUPLICATE_ORDER_NO' });
  });

  it('a pending payment: its fields change, paid-only ones are refused', async () => {
    const { sim, create } = await world();
    const payment = await create();
    expect(sim.amendPayment(payment.paymentId, { amount: '3' })).toMatchObject({ amount: '3', status: 'PENDING' });
    expect(() => sim.amendPayment(payment.paymentId, { txId: 'x' })).toThrow(
      expect.objectContaining({ code: 'PAYMENT_NOT_PAID' }),
    );
    const { payment: paid } = await sim.pay(payment.paymentId);
    expect(paid).toMatchObject({ amount: '3', paidAmount: '3', amountRaw: '3000000' });
  });

  it.each<[string, object, string, RegExp]>([
    ['nothing to change', {}, 'INVALID_AMENDMENT', /Nothing to change/],
    ['an unknown field', { status: 'PAID' }, 'INVALID_AMENDMENT', /Unknown field "status"/],
    ['a number amount', { amount: 5 }, 'INVALID_AMENDMENT', /must be a string/],
    ['a negative amount', { amount: '-1' }, 'INVALID_AMENDMENT', /decimal string/],
    ['more decimals than the token has', { amount: '1.1234567' }, 'INVALID_AMENDMENT', /decimals \(6\)/],
    ['a bad token', { tokenSymbol: 'usdt' }, 'INVALID_AMENDMENT', /uppercase/],
    ['a bad amountRaw', { amountRaw: '1.5' }, 'INVALID_AMENDMENT', /digits/],
  ])('refuses %s', async (_, changes, code, message) => {
    const { sim, create } = await world();
    const payment = await create();
    await sim.pay(payment.paymentId);
    const error = (() => {
      try {
        sim.amendPayment(payment.paymentId, changes);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(SimulatorError);
    expect(error).toMatchObject({ code, message: expect.stringMatching(message) });
  });

  it('refuses an unknown payment and one still gathering confirmations', async () => {
    const { sim, create } = await world({ confirmationIntervalMs: 60_000 });
    expect(() => sim.amendPayment('p_missing', { amount: '1' })).toThrow(
      expect.objectContaining({ code: 'PAYMENT_NOT_FOUND' }),
    );
    const payment = await create();
    void sim.pay(payment.paymentId).catch(() => undefined);
    expect(() => sim.amendPayment(payment.paymentId, { amount: '1' })).toThrow(
      expect.objectContaining({ code: 'PAYMENT_CONFIRMING' }),
    );
  });
});

describe('merchant API faults', () => {
  it('answers the next N requests with 503 + Retry-After, then normally again', async () => {
    const { sim, merchant, client, create } = await world();
    const payment = await create();
    expect(sim.failMerchantApi({ status: 503, count: 2, retryAfterSec: 1 })).toMatchObject({
      status: 503,
      code: 'SERVICE_UNAVAILABLE',
      remaining: 2,
      until: null,
      refused: 0,
    });
    for (let i = 0; i < 2; i++) {
      const res = await signedFetch(sim.url, merchant, 'GET', `/v1/payments/${payment.paymentId}`);
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('1');
      expect(await res.json()).toEqual({ error: 'SERVICE_UNAVAILABLE', message: expect.stringMatching(/Injected/) });
    }
    expect(sim.merchantApiFault).toBeNull();
    await expect(client.getPayment(payment.paymentId)).resolves.toMatchObject({ status: 'PENDING' });
  });

  it('429 for POST only, seen by the client as a coded ServiceApiError; GET still works', async () => {
    const { sim, client, create } = await world();
    const payment = await create();
    sim.failMerchantApi({ status: 429, count: 1, method: 'POST' });
    await expect(client.getPayment(payment.paymentId)).resolves.toBeDefined();
    const error = await create().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServiceApiError);
    expect(error).toMatchObject({ status: 429, code: 'RATE_LIMITED' });
    await expect(create()).resolves.toMatchObject({ status: 'PENDING' });
  });

  it('fails every request for a duration, then ends by itself', async () => {
    const { sim, client, create } = await world();
    const payment = await create();
    sim.failMerchantApi({ status: 500, durationMs: 300 });
    expect(sim.merchantApiFault).toMatchObject({ remaining: null, until: expect.any(String) });
    await expect(client.getPayment(payment.paymentId)).rejects.toMatchObject({ status: 500, code: 'INTERNAL_ERROR' });
    await expect
      .poll(() =>
        client.getPayment(payment.paymentId).then(
          (p) => p.status,
          () => 'refused',
        ),
      )
      .toBe('PENDING');
    expect(sim.merchantApiFault).toBeNull();
  });

  it("the client's retries ride out injected 503 + Retry-After, 429 and 500s, then read the payment", async () => {
    const { sim, retryingClient, create } = await world();
    const payment = await create();
    sim.failMerchantApi({ status: 503, count: 2, retryAfterSec: 1 });
    const started = Date.now();
    await expect(retryingClient.getPayment(payment.paymentId)).resolves.toMatchObject({ status: 'PENDING' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_900); // it honoured Retry-After twice
    sim.failMerchantApi({ status: 429, count: 3, retryAfterSec: 0 });
    await expect(retryingClient.getPayment(payment.paymentId)).resolves.toMatchObject({ status: 'PENDING' });
    sim.failMerchantApi({ status: 500, count: 3 });
    await expect(retryingClient.getPayment(payment.paymentId)).resolves.toMatchObject({ status: 'PENDING' });
    // A 4xx other than 429 is not retried: an unknown payment is one answer, at once.
    const unknown = await retryingClient.getPayment('p_unknown000').catch((e: unknown) => e);
    expect(unknown).toMatchObject({ status: 404, attempts: 1 });
  });

  it('is replaced by a new one, ended by clearMerchantApiFault, and refuses bad input', async () => {
    const { sim } = await world();
    sim.failMerchantApi({ status: 503, count: 5 });
    sim.failMerchantApi({ status: 429, count: 1 });
    expect(sim.merchantApiFault).toMatchObject({ status: 429, remaining: 1 });
    sim.clearMerchantApiFault();
    expect(sim.merchantApiFault).toBeNull();
    for (const bad of [
      { status: 404 },
      { status: 503, count: 0 },
      { status: 503, durationMs: -1 },
      { status: 503, method: 'PUT' },
      { status: 503, nope: 1 },
      null,
    ]) {
      expect(() => sim.failMerchantApi(bad as never)).toThrow(expect.objectContaining({ code: 'INVALID_API_FAULT' }));
    }
  });

  it('works over the control API: PUT, GET, DELETE', async () => {
    const { sim } = await world();
    const call = async (method: string, body?: unknown) => {
      const res = await fetch(`${sim.url}/_simulator/merchant-api-fault`, {
        method,
        headers: {
          'x-simulator-token': sim.controlToken,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: res.status, body: await res.json() };
    };
    expect(await call('PUT', { status: 503, count: 3 })).toMatchObject({
      status: 200,
      body: { fault: { remaining: 3 } },
    });
    expect((await call('GET')).body.fault).toMatchObject({ status: 503 });
    expect(await call('DELETE')).toEqual({ status: 200, body: { fault: null } });
    expect(await call('PUT', { status: 418 })).toMatchObject({ status: 400, body: { error: 'INVALID_API_FAULT' } });
    expect(await call('POST')).toMatchObject({ status: 405 });
  });
});

describe('amend and test payments over the control API', () => {
  it('POST /_simulator/payments creates a test payment; POST .../amend changes it', async () => {
    const { sim, receiver } = await world();
    const post = async (path: string, body: unknown) => {
      const res = await fetch(`${sim.url}/_simulator${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-simulator-token': sim.controlToken },
        body: JSON.stringify(body),
      });
      return { status: res.status, body: await res.json() };
    };
    const created = await post('/payments', { amount: '4.20', notifyUrl: receiver.url });
    expect(created).toMatchObject({ status: 201, body: { amount: '4.20', tokenSymbol: 'USDT', status: 'PENDING' } });
    expect(created.body.orderNo).toMatch(/^test_[0-9a-f]{12}$/);
    const amended = await post(`/payments/${created.body.paymentId}/amend`, { amount: '5.00' });
    expect(amended).toMatchObject({ status: 200, body: { payment: { amount: '5.00' } } });
    expect(await post(`/payments/${created.body.paymentId}/amend`, { amount: 5 })).toMatchObject({
      status: 400,
      body: { error: 'INVALID_AMENDMENT' },
    });
    expect(await post('/payments', { amount: '1' })).toMatchObject({
      status: 400,
      body: { error: 'INVALID_NOTIFY_URL', message: expect.stringMatching(/forwardTo/) },
    });
    expect(await post('/payments', { amount: 'lots', notifyUrl: receiver.url })).toMatchObject({
      status: 400,
      body: { error: 'INVALID_AMOUNT' },
    });
    expect(await post('/payments', { merchant: 'nobody', notifyUrl: receiver.url })).toMatchObject({
      status: 400,
      body: { error: 'INVALID_BODY', message: expect.stringMatching(/No merchant "nobody"/) },
    });
  });
});
