import { afterEach, describe, expect, it } from 'vitest';
import { type FaultOptions, generateMerchant, SimulatorError, startSimulator } from '../src/index.js';
import { input, setup } from './support/fixtures.js';
import { startReceiver, startScriptedReceiver } from './support/receiver.js';

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(cleanup.splice(0).map((f) => f()));
});

async function world(options: Parameters<typeof setup>[0] = {}, work?: () => Promise<void>) {
  const s = await setup(options);
  const receiver = await startReceiver({ secret: s.merchant.webhookSecret, ...(work ? { work } : {}) });
  cleanup.push(
    () => s.sim.stop(),
    () => receiver.close(),
  );
  const create = (overrides: object = {}) => s.client.createPayment(input({ notifyUrl: receiver.url, ...overrides }));
  return { ...s, receiver, create };
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

describe('fault injection', () => {
  it('sequential duplicates: fresh dl_ ids, each after the previous settled; the shop credits once', async () => {
    const { sim, receiver, create } = await world();
    const payment = await create();
    const { deliveryIds } = await sim.pay(payment.paymentId, { duplicates: 2 });
    await sim.waitForIdle();
    expect(new Set(deliveryIds).size).toBe(3);
    const log = sim.deliveries({ paymentId: payment.paymentId });
    expect(log.map((d) => [d.deliveryId, d.kind, d.state])).toEqual([
      [deliveryIds[0], 'original', 'succeeded'],
      [deliveryIds[1], 'duplicate', 'succeeded'],
      [deliveryIds[2], 'duplicate', 'succeeded'],
    ]);
    expect(receiver.requests.map((r) => r.deliveryId)).toEqual(deliveryIds);
    expect(receiver.requests.map((r) => r.answer)).toEqual([
      '{"received":true}',
      '{"received":true,"duplicate":true}',
      '{"received":true,"duplicate":true}',
    ]);
    expect(new Set(receiver.requests.map((r) => r.body)).size).toBe(1);
    expect(receiver.handled).toHaveLength(1);
  });

  it('concurrent duplicates arrive together; the shop handles one, the others get 409 and retry into duplicates', async () => {
    const { sim, receiver, create } = await world({ retry: { baseDelayMs: 20 } }, () => sleep(200));
    const payment = await create();
    await sim.pay(payment.paymentId, { duplicates: 3, concurrent: true });
    await sim.waitForIdle();
    const log = sim.deliveries({ paymentId: payment.paymentId });
    expect(log.map((d) => d.kind)).toEqual([
      'original',
      'concurrent-duplicate',
      'concurrent-duplicate',
      'concurrent-duplicate',
    ]);
    expect(log.every((d) => d.state === 'succeeded')).toBe(true);
    // The handler runs for 200 ms, so the others arrive while it holds the claim (409 DELIVERY_IN_PROGRESS).
    const firstRound = log.map((d) => d.attempts[0]?.status);
    expect(firstRound.filter((s) => s === 409).length).toBeGreaterThanOrEqual(1);
    expect(receiver.requests.filter((r) => r.answer === '{"received":true}')).toHaveLength(1);
    expect(receiver.handled).toHaveLength(1);
    expect(receiver.requests.filter((r) => r.answer.includes('"duplicate":true'))).toHaveLength(3);
  });

  it('concurrent: true alone means one concurrent duplicate', async () => {
    const { sim, create } = await world();
    const payment = await create();
    const { deliveryIds } = await sim.pay(payment.paymentId, { concurrent: true });
    expect(deliveryIds).toHaveLength(2);
    expect(sim.delivery(deliveryIds[1] as string)?.kind).toBe('concurrent-duplicate');
  });

  it('dropped responses: the shop answered, the sender ignored it and retried (same dl_ id)', async () => {
    const { sim, receiver, create } = await world({ retry: { baseDelayMs: 1 } });
    const payment = await create();
    await sim.pay(payment.paymentId, { dropResponses: 2 });
    await sim.waitForIdle();
    const [delivery] = sim.deliveries({ paymentId: payment.paymentId });
    expect(delivery?.attempts.map((a) => [a.outcome, a.status])).toEqual([
      ['dropped', null],
      ['dropped', null],
      ['succeeded', 200],
    ]);
    expect(delivery?.attempts[0]?.error).toMatch(/answer 200 dropped/);
    expect(new Set(receiver.requests.map((r) => r.deliveryId)).size).toBe(1);
    expect(receiver.requests.map((r) => r.answer)).toEqual([
      '{"received":true}',
      '{"received":true,"duplicate":true}',
      '{"received":true,"duplicate":true}',
    ]);
    expect(receiver.handled).toHaveLength(1);
  });

  it.each([600, -600])(
    'a signing clock skewed by %i s is refused by the receiver, and retried to the limit',
    async (skew) => {
      const { sim, receiver, create } = await world({ retry: { maxAttempts: 3, baseDelayMs: 1 } });
      const payment = await create();
      await sim.pay(payment.paymentId, { clockSkewSec: skew });
      await sim.waitForIdle();
      const [delivery] = sim.deliveries();
      expect(delivery?.state).toBe('failed');
      expect(receiver.requests.map((r) => [r.status, JSON.parse(r.answer).error])).toEqual(
        Array(3).fill([401, 'TIMESTAMP_OUT_OF_TOLERANCE']),
      );
      const nowSec = Date.now() / 1000;
      for (const a of delivery?.attempts ?? []) expect(Math.abs(a.signatureTimestamp - skew - nowSec)).toBeLessThan(30);
      expect(receiver.handled).toHaveLength(0);
    },
  );

  it('a skew inside the tolerance is accepted; a scripted verifier sees the skew invalidate signatures', async () => {
    const { sim, receiver, create } = await world({ faults: { clockSkewSec: 120 } });
    await sim.pay((await create()).paymentId);
    await sim.waitForIdle();
    expect(receiver.handled).toHaveLength(1);

    const { sim: sim2, client, merchant } = await setup({ retry: { maxAttempts: 1 }, faults: { clockSkewSec: -3600 } });
    const scripted = await startScriptedReceiver(merchant.webhookSecret, () => ({ status: 200 }));
    cleanup.push(
      () => sim2.stop(),
      () => scripted.close(),
    );
    await sim2.pay((await client.createPayment(input({ notifyUrl: scripted.url }))).paymentId);
    await sim2.waitForIdle();
    expect(scripted.stats).toMatchObject({ valid: 0, invalid: 1 });
  });

  it('deliverTo spreads the first delivery and its duplicates over app instances, round robin', async () => {
    const { sim, merchant, client } = await setup();
    const apps = await Promise.all([0, 1].map(() => startReceiver({ secret: merchant.webhookSecret })));
    cleanup.push(() => sim.stop(), ...apps.map((a) => () => a.close()));
    const payment = await client.createPayment(input({ notifyUrl: apps[0]?.url }));
    const { deliveryIds } = await sim.pay(payment.paymentId, { duplicates: 3, deliverTo: apps.map((a) => a.url) });
    await sim.waitForIdle();
    expect(apps[0]?.requests.map((r) => r.deliveryId)).toEqual([deliveryIds[0], deliveryIds[2]]);
    expect(apps[1]?.requests.map((r) => r.deliveryId)).toEqual([deliveryIds[1], deliveryIds[3]]);
  });

  it('simulator-wide rates apply to every payment and are repeatable with a seed', async () => {
    const run = async (seed: number) => {
      const merchant = generateMerchant({ confirmations: 0 });
      const receiver = await startReceiver({ secret: merchant.webhookSecret });
      const sim = await startSimulator({
        merchants: [merchant],
        seed,
        retry: { baseDelayMs: 1 },
        faults: { duplicateRate: 0.3, concurrentDuplicateRate: 0.1, dropResponseRate: 0.1 },
      });
      cleanup.push(
        () => sim.stop(),
        () => receiver.close(),
      );
      const { createServiceClient } = await import('@service-pay/client');
      const client = createServiceClient({ baseUrl: sim.url, apiKey: merchant.apiKey, apiSecret: merchant.apiSecret });
      const payments = await Promise.all(
        Array.from({ length: 60 }, (_, i) =>
          client.createPayment(input({ orderNo: `o-${i}`, notifyUrl: receiver.url })),
        ),
      );
      // pay() draws its faults synchronously, so the draws follow this order whatever the timing.
      await Promise.all(payments.sort((x, y) => x.orderNo.localeCompare(y.orderNo)).map((p) => sim.pay(p.paymentId)));
      await sim.waitForIdle();
      expect(receiver.handled).toHaveLength(60);
      expect(sim.seed).toBe(seed);
      return (
        sim
          .deliveries()
          // Only the first attempt: how many retries a concurrent duplicate needs depends on timing.
          .map((d) => `${d.orderNo}:${d.kind}:${d.attempts[0]?.outcome === 'dropped'}`)
          .sort()
      );
    };
    const a = await run(42);
    const b = await run(42);
    expect(a).toEqual(b);
    const kinds = a.map((k) => k.split(':')[1]);
    expect(kinds.filter((k) => k === 'duplicate').length).toBeGreaterThan(5);
    expect(kinds.filter((k) => k === 'concurrent-duplicate').length).toBeGreaterThan(0);
    expect(a.some((k) => k.includes('true'))).toBe(true);
  });

  it('setFaults changes the rates at run time and refuses bad values', async () => {
    const { sim, create } = await world();
    expect(sim.faults).toEqual({ duplicateRate: 0, concurrentDuplicateRate: 0, dropResponseRate: 0, clockSkewSec: 0 });
    expect(sim.setFaults({ duplicateRate: 1 })).toMatchObject({ duplicateRate: 1, clockSkewSec: 0 });
    const { deliveryIds } = await sim.pay((await create()).paymentId);
    expect(deliveryIds).toHaveLength(2);
    const bad: [FaultOptions, RegExp][] = [
      [{ duplicateRate: 2 }, /probability/],
      [{ dropResponseRate: -0.1 }, /probability/],
      [{ clockSkewSec: 0.5 }, /whole number/],
      [{ nope: 1 } as FaultOptions, /Unknown fault/],
    ];
    for (const [faults, message] of bad) {
      expect(() => sim.setFaults(faults)).toThrow(
        expect.objectContaining({ code: 'INVALID_FAULTS', message: expect.stringMatching(message) }),
      );
    }
    expect(sim.faults.duplicateRate).toBe(1);
    expect(() => sim.setFaults(null as never)).toThrow(SimulatorError);
  });
});
