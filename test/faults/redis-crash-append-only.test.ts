import { afterAll, expect, it } from 'vitest';
import { FaultRun, sleep, some } from './support/fault-run.js';

/**
 * Guarantees table, row 2: Redis run with persistence (append-only file, fsync always) SIGKILLed and
 * restarted while slow handlers run -> 0 double, 0 lost.
 *
 * 60 payments paid as a stream (10 every 0.2 s) over an Express and a Fastify process, each delivered
 * twice at the same moment, once to each. Handlers work 2 s before they commit. Redis is SIGKILLed
 * 2.5 s in (some handlers are finishing, some are mid-work, new claims are arriving) and comes back 1 s
 * later from its append-only file. Every write Redis acknowledged survives; what was in flight at the kill
 * did not get an answer, so claims, extends and completions all fail once; a completion that failed must
 * be retried until it lands, or the duplicate's retry credits the payment again once the lease expires.
 * Every handler option is left at its default (v2: a 10 s lease, ten times the outage).
 */
const PAYMENTS = 60;
const BATCHES = 6;
const DELAY_MS = 2_000;
const DOWN_MS = 1_000;

let run: FaultRun | undefined;
afterAll(async () => {
  await run?.stop();
});

it('SIGKILLs an append-only Redis mid-stream and restarts it: 0 double, 0 lost', async () => {
  run = await FaultRun.start({
    name: 'b-redis-crash-append-only',
    persistence: 'append-only',
    apps: ['express', 'fastify'],
    appEnv: { FAULT_DELAY_MS: String(DELAY_MS) },
    retry: { maxAttempts: 8, baseDelayMs: 500, factor: 2, timeoutMs: 5_000 },
  });
  const r = run;
  const ids = await r.createPayments(PAYMENTS);
  const urls = r.webhookUrls;
  const started = Date.now();

  const crash = (async () => {
    await sleep(DELAY_MS + 500);
    const runningAtKill = r.events('run').length - r.events('credit').length;
    const killedAt = Date.now();
    await r.redis.restart(DOWN_MS);
    return { runningAtKill, downMs: Date.now() - killedAt };
  })();
  const perBatch = PAYMENTS / BATCHES;
  for (let b = 0; b < BATCHES; b++) {
    await r.pay(ids.slice(b * perBatch, (b + 1) * perBatch), (_id, i) => ({
      duplicates: 1,
      concurrent: true,
      deliverTo: [urls[i % 2], urls[(i + 1) % 2]] as string[],
    }));
    await sleep(200);
  }
  const { runningAtKill, downMs } = await crash;

  await r.sim.waitForIdle({ timeoutMs: 150_000 });
  const figures = await r.figures(ids);
  r.report(figures, {
    kills: 1,
    redisDownMs: downMs,
    handlersRunningAtKill: runningAtKill,
    wallSec: Number(((Date.now() - started) / 1000).toFixed(1)),
  });

  expect(runningAtKill).toBeGreaterThan(0); // the crash hit handlers at work
  expect(figures.answered['503'] ?? 0).toBeGreaterThan(0); // and deliveries that came in meanwhile
  expect(figures.double, `credited twice: ${some(figures.doubleIds)}`).toBe(0);
  expect(figures.lost, `never credited:\n${figures.lostWhy}`).toBe(0);
});
