import { afterEach, describe, expect, it } from 'vitest';
import {
  type DeliveryAttemptEvent,
  generateMerchant,
  SimulatorError,
  type SimulatorOptions,
  startSimulator,
} from '../src/index.js';
import { input, setup } from './support/fixtures.js';
import { startScriptedReceiver } from './support/receiver.js';

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(cleanup.splice(0).map((f) => f()));
});

const merchant = generateMerchant();

describe('startSimulator options', () => {
  it.each<[string, unknown, RegExp]>([
    ['no options', undefined, /options object/],
    ['no merchants', {}, /merchants must be a non-empty array/],
    ['empty merchants', { merchants: [] }, /non-empty array/],
    ['a merchant without apiSecret', { merchants: [{ ...merchant, apiSecret: undefined }] }, /apiSecret/],
    ['an apiKey with a comma', { merchants: [{ ...merchant, apiKey: 'a,b' }] }, /must not contain/],
    ['a repeated apiKey', { merchants: [merchant, merchant] }, /used twice/],
    ['negative confirmations', { merchants: [{ ...merchant, confirmations: -1 }] }, /confirmations/],
    ['a bad port', { merchants: [merchant], port: 70_000 }, /port/],
    [
      '9 attempts',
      { merchants: [merchant], retry: { maxAttempts: 9 } },
      /maxAttempts must be a whole number from 1 to 8/,
    ],
    ['a zero timeout', { merchants: [merchant], retry: { timeoutMs: 0 } }, /timeoutMs/],
    ['a shrinking factor', { merchants: [merchant], retry: { factor: 0.5 } }, /factor/],
    ['a rate above 1', { merchants: [merchant], faults: { duplicateRate: 1.5 } }, /probability/],
    ['bad token decimals', { merchants: [merchant], tokenDecimals: { USDT: -1 } }, /tokenDecimals.USDT/],
    ['a non-function clock', { merchants: [merchant], now: 5 }, /now/],
  ])('refuses %s with INVALID_OPTIONS', async (_, options, message) => {
    const error = await startSimulator(options as SimulatorOptions).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SimulatorError);
    expect(error).toMatchObject({ code: 'INVALID_OPTIONS', message: expect.stringMatching(message) });
  });

  it('reports a port in use as PORT_IN_USE', async () => {
    const first = await startSimulator({ merchants: [merchant] });
    cleanup.push(() => first.stop());
    await expect(startSimulator({ merchants: [merchant], port: first.port })).rejects.toMatchObject({
      code: 'PORT_IN_USE',
    });
  });
});

describe('stop() and waitForIdle()', () => {
  it('cancels pending retries and in-flight requests, and leaves nothing running', async () => {
    const { sim, client, merchant: m } = await setup({ retry: { baseDelayMs: 60_000, timeoutMs: 5000 } });
    const failing = await startScriptedReceiver(m.webhookSecret, () => ({ status: 500 }));
    const hanging = await startScriptedReceiver(m.webhookSecret, () => 'hang');
    cleanup.push(
      () => failing.close(),
      () => hanging.close(),
    );
    const a = await client.createPayment(input({ notifyUrl: failing.url }));
    const b = await client.createPayment(input({ notifyUrl: hanging.url }));
    await sim.pay(a.paymentId);
    await sim.pay(b.paymentId);
    await expect.poll(() => sim.deliveries({ paymentId: a.paymentId })[0]?.state).toBe('waiting-retry');
    await expect.poll(() => hanging.requests.length).toBe(1);

    await sim.stop(); // must not wait for the 60 s retry timer or the 5 s timeout
    expect(sim.deliveries().map((d) => d.state)).toEqual(['cancelled', 'cancelled']);
    await expect.poll(() => hanging.stats.abandoned).toBe(1);
    await sim.stop(); // idempotent
    await expect(sim.waitForIdle()).resolves.toBeUndefined();
    await expect(sim.pay(a.paymentId)).rejects.toMatchObject({ code: 'SIMULATOR_STOPPED' });
    expect(() => sim.expire(a.paymentId)).toThrow(expect.objectContaining({ code: 'SIMULATOR_STOPPED' }));
    await expect(fetch(`${sim.url}/_simulator`)).rejects.toThrow();
    expect(failing.requests).toHaveLength(1);
  });

  it('rejects a pay that is gathering confirmations when stopped', async () => {
    const { sim, client } = await setup({ confirmationIntervalMs: 60_000 });
    const p = await client.createPayment(input());
    const paying = sim.pay(p.paymentId);
    await sim.stop();
    await expect(paying).rejects.toMatchObject({ code: 'SIMULATOR_STOPPED' });
  });

  it('waitForIdle resolves at once when idle, and rejects with IDLE_TIMEOUT when busy', async () => {
    const { sim, client } = await setup({ retry: { baseDelayMs: 60_000 } });
    cleanup.push(() => sim.stop());
    await expect(sim.waitForIdle()).resolves.toBeUndefined();
    expect(sim.deliveries(null as never)).toEqual([]);
    await sim.pay((await client.createPayment(input({ notifyUrl: 'http://127.0.0.1:9/' }))).paymentId);
    await expect(sim.waitForIdle({ timeoutMs: 30 })).rejects.toMatchObject({
      code: 'IDLE_TIMEOUT',
      message: expect.stringMatching(/1 deliveries pending/),
    });
    await expect(sim.waitForIdle({ timeoutMs: -1 })).rejects.toMatchObject({ code: 'INVALID_OPTIONS' });
  });

  it('calls onDeliveryAttempt after every attempt; a throwing callback changes nothing', async () => {
    const events: DeliveryAttemptEvent[] = [];
    const m = generateMerchant({ confirmations: 0 });
    const receiver = await startScriptedReceiver(m.webhookSecret, (n) => ({ status: n < 3 ? 500 : 200 }));
    const sim = await startSimulator({
      merchants: [m],
      retry: { baseDelayMs: 1 },
      onDeliveryAttempt: (event) => {
        events.push(event);
        throw new Error('logger bug');
      },
    });
    cleanup.push(
      () => sim.stop(),
      () => receiver.close(),
    );
    const { createServiceClient } = await import('@service-pay/client');
    const client = createServiceClient({ baseUrl: sim.url, apiKey: m.apiKey, apiSecret: m.apiSecret });
    await sim.pay((await client.createPayment(input({ notifyUrl: receiver.url }))).paymentId);
    await sim.waitForIdle();
    expect(events.map((e) => [e.attempt.attempt, e.attempt.status, e.delivery.state])).toEqual([
      [1, 500, 'waiting-retry'],
      [2, 500, 'waiting-retry'],
      [3, 200, 'succeeded'],
    ]);
  });

  it('binds to 127.0.0.1 and reports a usable url', async () => {
    const sim = await startSimulator({ merchants: [merchant] });
    cleanup.push(() => sim.stop());
    expect(sim.url).toBe(`http://127.0.0.1:${sim.port}`);
    expect(sim.merchants).toEqual([{ ...merchant, name: merchant.apiKey }]);
    expect(Object.isFrozen(sim.merchants)).toBe(true);
  });
});
