import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_PAYMENT_LIMITS } from '../src/index.js';
import { input, setup } from './support/fixtures.js';
import { startReceiver } from './support/receiver.js';

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(cleanup.splice(0).map((f) => f()));
});

async function world() {
  const s = await setup({ retry: { baseDelayMs: 5 } });
  const receiver = await startReceiver({ secret: s.merchant.webhookSecret });
  cleanup.push(
    () => s.sim.stop(),
    () => receiver.close(),
  );
  const create = () => s.client.createPayment(input({ notifyUrl: receiver.url }));
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${s.sim.url}/_simulator${path}`, {
      method,
      headers: {
        'x-simulator-token': s.sim.controlToken,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
    return { status: res.status, body: await res.json() };
  };
  return { ...s, receiver, create, call };
}

describe('control API under /_simulator', () => {
  it('GET /_simulator describes the simulator without secrets', async () => {
    const { sim, merchant, call } = await world();
    const { status, body } = await call('GET', '');
    expect(status).toBe(200);
    expect(body).toEqual({
      url: sim.url,
      dashboard: `${sim.url}/`,
      merchantApi: `${sim.url}/v1/payments`,
      merchants: [{ name: merchant.apiKey, apiKey: merchant.apiKey, confirmations: 2 }],
      forwardTo: null,
      retry: { maxAttempts: 8, baseDelayMs: 5, factor: 2, timeoutMs: 5000 },
      faults: { duplicateRate: 0, concurrentDuplicateRate: 0, dropResponseRate: 0, clockSkewSec: 0 },
      merchantApiFault: null,
      limits: DEFAULT_PAYMENT_LIMITS,
      seed: sim.seed,
      payments: 0,
      pendingDeliveries: 0,
      retain: { payments: 10_000, deliveries: 50_000 },
      dropped: { payments: 0, deliveries: 0 },
    });
    expect(JSON.stringify(body)).not.toContain(merchant.apiSecret);
    expect(JSON.stringify(body)).not.toContain(sim.controlToken);
    expect(JSON.stringify(body)).not.toContain(merchant.webhookSecret);
  });

  it('pays a payment with curl-style POST (no body) and with options', async () => {
    const { receiver, create, call } = await world();
    const a = await create();
    const paid = await call('POST', `/payments/${a.paymentId}/pay`);
    expect(paid.status).toBe(200);
    expect(paid.body.payment).toMatchObject({ paymentId: a.paymentId, status: 'PAID', confirmations: 2 });
    expect(paid.body.deliveryIds).toEqual([expect.stringMatching(/^dl_/)]);

    const b = await create();
    const withOptions = await call('POST', `/payments/${b.paymentId}/pay`, {
      txId: 'tx-1',
      network: 'ETH',
      duplicates: 1,
    });
    expect(withOptions.body.payment).toMatchObject({ txId: 'tx-1', paymentNetwork: 'ETH' });
    expect(withOptions.body.deliveryIds).toHaveLength(2);

    expect((await call('POST', '/wait-idle?timeoutMs=5000')).body).toEqual({ idle: true });
    expect(receiver.handled.map((e) => e.paymentId)).toEqual([a.paymentId, b.paymentId]);
  });

  it('answers coded errors for bad pay calls', async () => {
    const { create, call } = await world();
    const p = await create();
    expect(await call('POST', `/payments/${p.paymentId}/pay`, '{nope')).toMatchObject({
      status: 400,
      body: { error: 'INVALID_JSON' },
    });
    expect(await call('POST', `/payments/${p.paymentId}/pay`, { duplicates: 'x' })).toMatchObject({
      status: 400,
      body: { error: 'INVALID_PAY_OPTIONS', message: expect.stringMatching(/duplicates/) },
    });
    expect(await call('POST', '/payments/p_missing/pay')).toMatchObject({
      status: 404,
      body: { error: 'PAYMENT_NOT_FOUND' },
    });
    await call('POST', `/payments/${p.paymentId}/pay`);
    expect(await call('POST', `/payments/${p.paymentId}/pay`)).toMatchObject({
      status: 409,
      body: { error: 'PAYMENT_ALREADY_PAID' },
    });
    expect(await call('POST', `/payments/${p.paymentId}/expire`)).toMatchObject({
      status: 409,
      body: { error: 'PAYMENT_ALREADY_PAID' },
    });
  });

  it('lists and reads payments, expires and redelivers', async () => {
    const { create, call } = await world();
    const a = await create();
    const b = await create();
    const list = await call('GET', '/payments');
    expect(list.body.payments.map((p: { paymentId: string }) => p.paymentId)).toEqual([a.paymentId, b.paymentId]);
    expect((await call('GET', `/payments/${a.paymentId}`)).body).toMatchObject({
      paymentId: a.paymentId,
      status: 'PENDING',
    });
    expect(await call('GET', '/payments/p_missing')).toMatchObject({
      status: 404,
      body: { error: 'PAYMENT_NOT_FOUND' },
    });

    expect((await call('POST', `/payments/${a.paymentId}/expire`)).body.payment.status).toBe('EXPIRED');
    expect(await call('POST', `/payments/${a.paymentId}/pay`)).toMatchObject({
      status: 409,
      body: { error: 'PAYMENT_EXPIRED' },
    });

    expect(await call('POST', `/payments/${b.paymentId}/redeliver`)).toMatchObject({
      status: 409,
      body: { error: 'PAYMENT_NOT_PAID' },
    });
    await call('POST', `/payments/${b.paymentId}/pay`);
    const again = await call('POST', `/payments/${b.paymentId}/redeliver`, { duplicates: 1 });
    expect(again.body.deliveryIds).toHaveLength(2);
    expect(await call('POST', `/payments/${b.paymentId}/redeliver`, { txId: 'x' })).toMatchObject({
      status: 400,
      body: { error: 'INVALID_PAY_OPTIONS' },
    });
  });

  it('serves the delivery log, filtered, and one delivery by id', async () => {
    const { sim, create, call } = await world();
    const a = await create();
    const b = await create();
    const [first] = (await call('POST', `/payments/${a.paymentId}/pay`)).body.deliveryIds;
    await call('POST', `/payments/${b.paymentId}/pay`);
    await sim.waitForIdle();
    const all = await call('GET', '/deliveries');
    expect(all.body.deliveries).toHaveLength(2);
    const forA = await call('GET', `/deliveries?paymentId=${a.paymentId}`);
    expect(forA.body.deliveries).toEqual([
      expect.objectContaining({ deliveryId: first, paymentId: a.paymentId, state: 'succeeded' }),
    ]);
    expect(forA.body.deliveries[0].attempts[0]).toEqual({
      attempt: 1,
      startedAt: expect.any(String),
      latencyMs: expect.any(Number),
      status: 200,
      error: null,
      outcome: 'succeeded',
      responseBody: '{"received":true}',
      signatureTimestamp: expect.any(Number),
      nextRetryInMs: null,
    });
    expect((await call('GET', '/deliveries?state=failed')).body.deliveries).toEqual([]);
    expect(await call('GET', '/deliveries?state=bogus')).toMatchObject({
      status: 400,
      body: { error: 'INVALID_OPTIONS' },
    });
    expect((await call('GET', `/deliveries/${first}`)).body.deliveryId).toBe(first);
    expect(await call('GET', '/deliveries/dl_missing')).toMatchObject({
      status: 404,
      body: { error: 'DELIVERY_NOT_FOUND' },
    });
  });

  it('reads and changes faults', async () => {
    const { sim, call } = await world();
    expect((await call('PUT', '/faults', { duplicateRate: 0.5, clockSkewSec: -30 })).body).toMatchObject({
      duplicateRate: 0.5,
      clockSkewSec: -30,
    });
    expect((await call('GET', '/faults')).body).toMatchObject({
      duplicateRate: 0.5,
      clockSkewSec: -30,
      dropResponseRate: 0,
    });
    expect(sim.faults.duplicateRate).toBe(0.5);
    expect(await call('PUT', '/faults', { duplicateRate: 'lots' })).toMatchObject({
      status: 400,
      body: { error: 'INVALID_FAULTS' },
    });
    expect(await call('PUT', '/faults', [1])).toMatchObject({ status: 400, body: { error: 'INVALID_FAULTS' } });
  });

  it('wait-idle times out with 504 IDLE_TIMEOUT and refuses a bad timeout', async () => {
    const { client, call } = await world();
    const p = await client.createPayment(input({ notifyUrl: 'http://127.0.0.1:9/refused' }));
    await call('POST', `/payments/${p.paymentId}/pay`);
    expect(await call('POST', '/wait-idle?timeoutMs=20')).toMatchObject({
      status: 504,
      body: { error: 'IDLE_TIMEOUT' },
    });
    expect(await call('POST', '/wait-idle?timeoutMs=abc')).toMatchObject({
      status: 400,
      body: { error: 'INVALID_OPTIONS' },
    });
  });

  it('answers 405 and 404 for wrong methods and unknown routes', async () => {
    const { call } = await world();
    expect(await call('DELETE', '/payments')).toMatchObject({ status: 405, body: { error: 'METHOD_NOT_ALLOWED' } });
    expect(await call('GET', '/payments/p_1/pay')).toMatchObject({ status: 405 });
    expect(await call('POST', '/faults')).toMatchObject({ status: 405 });
    expect(await call('GET', '/wait-idle')).toMatchObject({ status: 405 });
    expect(await call('GET', '/nothing-here')).toMatchObject({ status: 404, body: { error: 'NOT_FOUND' } });
  });
});
