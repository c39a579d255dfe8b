import { afterAll, expect, it } from 'vitest';
import { FaultRun, some } from './support/fault-run.js';

/**
 * Guarantees table, row 7: 5 simultaneous deliveries of every payment over 3 processes; 30% of handler
 * calls throw -> 0 double, 0 lost.
 *
 * 100 payments, each delivered 5 times at the same moment round robin over an Express, a Fastify and a
 * second Express process (starting at a different one for each payment). Handlers work 100 ms, then 30% of
 * calls throw before crediting (the claim is released, 500, the sender retries). The sender retries 8
 * times from 0.2 s doubling. Every handler option is left at its default.
 */
const PAYMENTS = 100;

let run: FaultRun | undefined;
afterAll(async () => {
  await run?.stop();
});

it('delivers every payment 5 times at once over 3 processes with 30% of handler calls throwing: 0 double, 0 lost', async () => {
  run = await FaultRun.start({
    name: 'g-concurrent-deliveries-and-throws',
    apps: ['express', 'fastify', 'express'],
    appEnv: { FAULT_DELAY_MS: '100', FAULT_THROW_RATE: '0.3' },
    retry: { maxAttempts: 8, baseDelayMs: 200, factor: 2, timeoutMs: 5_000 },
  });
  const r = run;
  const ids = await r.createPayments(PAYMENTS);
  const urls = r.webhookUrls;
  const started = Date.now();
  await r.pay(ids, (_id, i) => ({
    duplicates: 4,
    concurrent: true,
    deliverTo: [0, 1, 2].map((k) => urls[(i + k) % 3] as string),
  }));

  await r.sim.waitForIdle({ timeoutMs: 120_000 });
  const figures = await r.figures(ids);
  const throws = r.events('throw').length;
  r.report(figures, {
    deliveriesPerPayment: 5,
    throws,
    throwShare: Number((throws / Math.max(1, figures.handlerRuns)).toFixed(2)),
    wallSec: Number(((Date.now() - started) / 1000).toFixed(1)),
  });

  expect(figures.deliveries).toBe(PAYMENTS * 5);
  expect(throws).toBeGreaterThan(0); // the fault happened
  expect(figures.double, `credited twice: ${some(figures.doubleIds)}`).toBe(0);
  expect(figures.lost, `never credited:\n${figures.lostWhy}`).toBe(0);
});
