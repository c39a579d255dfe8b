import { afterAll, expect, it } from 'vitest';
import { FaultRun, sleep, some } from './support/fault-run.js';

/**
 * Guarantees table, row 1: every store connection cut (CLIENT KILL) for 0.4 s just as handlers finish
 * -> 0 double, 0 lost.
 *
 * 60 payments over an Express and a Fastify process, each delivered once and then once more (a sequential
 * duplicate, to the other process). Handlers work 1.5 s, commit (confirmLease, INSERT), then do 0.5 s of
 * post-commit work and return; the cut starts 0.1 s before the first handler returns and lasts 0.4 s, so
 * the commits land before it and the completions inside it. A pipeline that tries `complete` once and
 * answers 200 leaves a lease to expire, and the duplicate then credits again (before v2: 59 of 60 with a
 * 3 s lease). The lease is 3 s here, so a regression shows within the sender's window.
 */
const PAYMENTS = 60;
const DELAY_MS = 1_500;
const AFTER_COMMIT_MS = 500;
const CUT_MS = 400;

let run: FaultRun | undefined;
afterAll(async () => {
  await run?.stop();
});

it('cuts every store connection for 0.4 s as handlers finish: 0 double, 0 lost', async () => {
  run = await FaultRun.start({
    name: 'a-store-cut-at-completion',
    apps: ['express', 'fastify'],
    appEnv: {
      FAULT_LEASE_MS: '3000',
      FAULT_DELAY_MS: String(DELAY_MS),
      FAULT_AFTER_COMMIT_MS: String(AFTER_COMMIT_MS),
    },
    retry: { maxAttempts: 8, baseDelayMs: 500, factor: 2, timeoutMs: 5_000 },
  });
  const r = run;
  const ids = await r.createPayments(PAYMENTS);
  const urls = r.webhookUrls;
  const started = Date.now();
  await r.pay(ids, (_id, i) => ({ duplicates: 1, deliverTo: [urls[i % 2], urls[(i + 1) % 2]] as string[] }));

  // Time the cut from the handlers' own clock: the first handler returns DELAY_MS + AFTER_COMMIT_MS after it
  // started.
  await r.apps[0]!.until(() => r.events('run').length >= PAYMENTS, 10_000, `${PAYMENTS} handler runs`);
  const runs = r.events('run');
  const firstStart = runs[0]!.at;
  const spreadMs = runs[PAYMENTS - 1]!.at - firstStart;
  await sleep(Math.max(0, firstStart + DELAY_MS + AFTER_COMMIT_MS - 100 - Date.now()));
  const cut = await r.redis.cutClients(CUT_MS);

  await r.sim.waitForIdle({ timeoutMs: 150_000 });
  const figures = await r.figures(ids);
  const storeErrorsLogged = r.events('log').filter((e) => e.level === 'error').length;
  r.report(figures, {
    cutMs: CUT_MS,
    connectionsCut: cut.cut,
    cutRounds: cut.rounds,
    handlerStartSpreadMs: spreadMs,
    errorLogs: storeErrorsLogged,
    wallSec: Number(((Date.now() - started) / 1000).toFixed(1)),
  });

  expect(cut.cut).toBeGreaterThan(0); // the fault happened
  expect(figures.double, `credited twice: ${some(figures.doubleIds)}`).toBe(0);
  expect(figures.lost, `never credited:\n${figures.lostWhy}`).toBe(0);
});
