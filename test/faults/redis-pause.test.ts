import { afterAll, expect, it } from 'vitest';
import { FaultRun, sleep, some } from './support/fault-run.js';

/**
 * Guarantees table, row 4: Redis SIGSTOPped 7 s mid-stream, sender retrying for 60 s -> 0 double, 0 lost.
 *
 * 200 payments paid as a steady stream over 12 s (a batch every 0.5 s) to an Express, a Fastify and a
 * second Express process, each delivered twice at the same moment to two of them; handlers take 50 ms.
 * (Concurrent, not sequential, duplicates: a sequential one starts only once the first delivery has given
 * up, and would credit a payment the sender had in truth lost.)
 * 2.5 s in, Redis is stopped for 7 s: connections stay open and nothing is answered, so claims time out
 * (503) and then land when Redis wakes. Those late claims must not hold a lease nobody owns past the
 * sender's window (before v2: 122 of 300 never credited with the 60 s default lease). The sender retries 8
 * times from 0.47 s doubling, about 60 s in all. Every handler option is left at its default.
 */
const PAYMENTS = 200;
const BATCHES = 25;
const PAUSE_AFTER_MS = 2_500;
const PAUSE_MS = 7_000;

let run: FaultRun | undefined;
afterAll(async () => {
  await run?.stop();
});

it('stops Redis for 7 s mid-stream, the sender retrying for 60 s: 0 double, 0 lost', async () => {
  run = await FaultRun.start({
    name: 'd-redis-pause',
    apps: ['express', 'fastify', 'express'],
    appEnv: { FAULT_DELAY_MS: '50' },
    retry: { maxAttempts: 8, baseDelayMs: 470, factor: 2, timeoutMs: 5_000 },
  });
  const r = run;
  const ids = await r.createPayments(PAYMENTS);
  const urls = r.webhookUrls;
  const started = Date.now();

  const pause = (async () => {
    await sleep(PAUSE_AFTER_MS);
    const creditsBefore = r.events('credit').length;
    await r.redis.pause(PAUSE_MS);
    return { creditsBefore };
  })();
  const perBatch = PAYMENTS / BATCHES;
  for (let b = 0; b < BATCHES; b++) {
    await r.pay(ids.slice(b * perBatch, (b + 1) * perBatch), (_id, i) => ({
      duplicates: 1,
      concurrent: true,
      deliverTo: [urls[i % 3], urls[(i + 1) % 3]] as string[],
    }));
    await sleep(500);
  }
  const { creditsBefore } = await pause;

  await r.sim.waitForIdle({ timeoutMs: 170_000 });
  const figures = await r.figures(ids);
  const senderWindowSec = (470 * (2 ** 7 - 1)) / 1000;
  r.report(figures, {
    pauses: 1,
    pauseMs: PAUSE_MS,
    creditedBeforePause: creditsBefore,
    senderWindowSec,
    wallSec: Number(((Date.now() - started) / 1000).toFixed(1)),
  });

  expect(figures.answered['503'] ?? 0).toBeGreaterThan(0); // the pause hit deliveries
  expect(figures.double, `credited twice: ${some(figures.doubleIds)}`).toBe(0);
  expect(figures.lost, `never credited:\n${figures.lostWhy}`).toBe(0);
});
