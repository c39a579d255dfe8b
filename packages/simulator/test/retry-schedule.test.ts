import { startServer } from '@service-pay/test-kit';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type DeliveryRecord, generateMerchant, type RetryOptions, startSimulator } from '../src/index.js';
import { input, setup } from './support/fixtures.js';
import { type Script, startScriptedReceiver } from './support/receiver.js';

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(cleanup.splice(0).map((f) => f()));
});

/** Pays one payment whose receiver follows `script`; resolves with its only delivery once it is final. */
async function deliverWith(script: Script, retry: RetryOptions) {
  const { sim, client, merchant } = await setup({ retry });
  const receiver = await startScriptedReceiver(merchant.webhookSecret, script);
  cleanup.push(
    () => sim.stop(),
    () => receiver.close(),
  );
  const payment = await client.createPayment(input({ notifyUrl: receiver.url }));
  await sim.pay(payment.paymentId);
  await sim.waitForIdle({ timeoutMs: 20_000 });
  const [delivery] = sim.deliveries({ paymentId: payment.paymentId });
  return { sim, receiver, delivery: delivery as DeliveryRecord };
}

const starts = (d: DeliveryRecord) => d.attempts.map((a) => Date.parse(a.startedAt));

describe('webhook retry schedule', () => {
  it('defaults to the spec: 8 attempts, a 5000 ms timeout; backoff 1000 ms x 2', async () => {
    const sim = await startSimulator({ merchants: [generateMerchant()] });
    cleanup.push(() => sim.stop());
    expect(sim.retry).toEqual({ maxAttempts: 8, baseDelayMs: 1000, factor: 2, timeoutMs: 5000 });
  });

  it('stops at 8 attempts, with exponentially growing gaps, all signed and with one dl_ id', async () => {
    const { receiver, delivery } = await deliverWith(() => ({ status: 500 }), { baseDelayMs: 4, factor: 2 });
    expect(delivery.state).toBe('failed');
    expect(delivery.attempts).toHaveLength(8);
    expect(receiver.requests).toHaveLength(8);
    expect(receiver.stats).toMatchObject({ valid: 8, invalid: 0 });
    expect(new Set(receiver.requests.map((r) => r.deliveryId))).toEqual(new Set([delivery.deliveryId]));
    expect(delivery.attempts.map((a) => a.attempt)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(delivery.attempts.map((a) => [a.status, a.outcome])).toEqual(Array(8).fill([500, 'http-error']));
    expect(delivery.attempts.map((a) => a.nextRetryInMs)).toEqual([4, 8, 16, 32, 64, 128, 256, null]);
    expect(delivery.attempts.every((a) => a.error === 'HTTP 500' && a.responseBody === 'scripted 500')).toBe(true);

    // Loose ordering only: each gap is at least the planned pause (timers never fire early, give or
    // take a millisecond of rounding), and the last gap is longer than the first.
    const t = starts(delivery);
    const gaps = t.slice(1).map((v, i) => v - (t[i] as number));
    for (const [i, gap] of gaps.entries()) {
      expect(gap).toBeGreaterThanOrEqual((delivery.attempts[i]?.nextRetryInMs as number) - 2);
    }
    expect(gaps.at(-1)).toBeGreaterThan(gaps[0] as number);

    await new Promise((r) => setTimeout(r, 300));
    expect(receiver.requests).toHaveLength(8); // nothing after the last attempt
  });

  it('stops at the first 2xx', async () => {
    const answers = [500, 503, 204];
    const { receiver, delivery } = await deliverWith((n) => ({ status: answers[n - 1] ?? 500 }), { baseDelayMs: 2 });
    expect(delivery.state).toBe('succeeded');
    expect(delivery.attempts.map((a) => [a.status, a.outcome])).toEqual([
      [500, 'http-error'],
      [503, 'http-error'],
      [204, 'succeeded'],
    ]);
    expect(delivery.attempts.at(-1)?.nextRetryInMs).toBeNull();
    await new Promise((r) => setTimeout(r, 50));
    expect(receiver.requests).toHaveLength(3);
  });

  it('retries every non-2xx, redirects and 4xx included', async () => {
    const answers = [301, 404, 409, 200];
    const { delivery } = await deliverWith((n) => ({ status: answers[n - 1] ?? 500 }), { baseDelayMs: 1 });
    expect(delivery.attempts.map((a) => a.status)).toEqual([301, 404, 409, 200]);
  });

  it('honours maxAttempts and factor', async () => {
    const { delivery } = await deliverWith(() => ({ status: 500 }), { maxAttempts: 3, baseDelayMs: 5, factor: 3 });
    expect(delivery.attempts.map((a) => a.nextRetryInMs)).toEqual([5, 15, null]);
    expect(delivery.state).toBe('failed');
  });

  it('gives up on an attempt at the timeout, closes the connection, and retries', async () => {
    const { receiver, delivery } = await deliverWith((n) => (n === 1 ? 'hang' : { status: 200 }), {
      baseDelayMs: 1,
      timeoutMs: 150,
    });
    expect(delivery.state).toBe('succeeded');
    const [first, second] = delivery.attempts;
    expect(first).toMatchObject({ status: null, outcome: 'timeout', error: expect.stringMatching(/within 150 ms/) });
    expect(first?.latencyMs).toBeGreaterThanOrEqual(148);
    expect(second).toMatchObject({ status: 200, outcome: 'succeeded' });
    await vi.waitFor(() => expect(receiver.stats.abandoned).toBe(1), { timeout: 2000 });
  });

  it('counts headers followed by a stalled body as a timeout', async () => {
    const { sim, client } = await setup({ retry: { maxAttempts: 1, timeoutMs: 100 } });
    const stalling = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"received":');
    });
    cleanup.push(
      () => sim.stop(),
      () => stalling.close(),
    );
    const payment = await client.createPayment(input({ notifyUrl: stalling.url }));
    await sim.pay(payment.paymentId);
    await sim.waitForIdle();
    expect(sim.deliveries()[0]?.attempts[0]).toMatchObject({ outcome: 'timeout', status: null });
  });

  it('waits for a slow answer inside the timeout', async () => {
    const { sim, client } = await setup({ retry: { timeoutMs: 2000 } });
    const slow = await startServer((_req, res) => {
      setTimeout(() => res.writeHead(200).end('ok'), 200);
    });
    cleanup.push(
      () => sim.stop(),
      () => slow.close(),
    );
    const payment = await client.createPayment(input({ notifyUrl: slow.url }));
    await sim.pay(payment.paymentId);
    await sim.waitForIdle();
    const [attempt, ...rest] = sim.deliveries()[0]?.attempts ?? [];
    expect(rest).toHaveLength(0);
    expect(attempt).toMatchObject({ outcome: 'succeeded', status: 200 });
    expect(attempt?.latencyMs).toBeGreaterThanOrEqual(190);
  });

  it('retries after a reset connection and after a refused one', async () => {
    const { delivery } = await deliverWith((n) => (n === 1 ? 'reset' : { status: 200 }), { baseDelayMs: 1 });
    expect(delivery.attempts.map((a) => a.outcome)).toEqual(['network-error', 'succeeded']);
    expect(delivery.attempts[0]?.error).toMatch(/^network error: /);

    const { sim, client } = await setup({ retry: { maxAttempts: 2, baseDelayMs: 1 } });
    cleanup.push(() => sim.stop());
    const payment = await client.createPayment(input({ notifyUrl: 'http://127.0.0.1:9/closed' }));
    await sim.pay(payment.paymentId);
    await sim.waitForIdle();
    const [refused] = sim.deliveries();
    expect(refused?.state).toBe('failed');
    expect(refused?.attempts.map((a) => a.error)).toEqual([
      expect.stringMatching(/ECONNREFUSED/),
      expect.stringMatching(/ECONNREFUSED/),
    ]);
  });
});
