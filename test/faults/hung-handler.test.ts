import { afterAll, expect, it } from 'vitest';
import { FaultRun, some } from './support/fault-run.js';

/**
 * Guarantees table, row 6: a handler hangs on its first attempt, sender on the spec-like schedule (1 s
 * doubling, 8 attempts) -> logged at the deadline; credited once by a later attempt.
 *
 * 6 payments over an Express and a Fastify process; the first handler run of each never settles and
 * ignores `ctx.signal` (a handler stuck on a dead socket). Before v2 nothing ever ended it: 409 to every
 * retry, not one log line, the payment lost.
 *
 * Shortened to keep the test under ~30 s: `handlerTimeoutMs` 6 s and `leaseMs` 3 s in the app (defaults
 * 30 s and 10 s), the sender's schedule as the spec's (1 s, 2 s, 4 s, ... 8 attempts, 5 s timeout). At the
 * deadline the pipeline must abort `ctx.signal`, log an error with code HANDLER_TIMEOUT (and the payment
 * id, so the log line leads to the payment), stop the heartbeat and leave the lease to expire, so a later attempt runs the
 * handler again and credits the payment once.
 */
const PAYMENTS = 6;
const HANDLER_TIMEOUT_MS = 6_000;

let run: FaultRun | undefined;
afterAll(async () => {
  await run?.stop();
});

it('logs a hung handler at its deadline and credits the payment once on a later attempt', async () => {
  run = await FaultRun.start({
    name: 'f-hung-handler',
    apps: ['express', 'fastify'],
    appEnv: {
      FAULT_HANG_FIRST_RUN: '1',
      FAULT_HANDLER_TIMEOUT_MS: String(HANDLER_TIMEOUT_MS),
      FAULT_LEASE_MS: '3000',
    },
    retry: { maxAttempts: 8, baseDelayMs: 1_000, factor: 2, timeoutMs: 5_000 },
  });
  const r = run;
  const ids = await r.createPayments(PAYMENTS);
  const urls = r.webhookUrls;
  const started = Date.now();
  await r.pay(ids, (_id, i) => ({ deliverTo: [urls[i % 2] as string] }));

  await r.sim.waitForIdle({ timeoutMs: 170_000 });
  const figures = await r.figures(ids);
  const timeoutLogs = r.events('log').filter((e) => e.code === 'HANDLER_TIMEOUT');

  const problems: string[] = [];
  for (const id of ids) {
    const hang = r.events('hang').find((e) => e.paymentId === id);
    const credit = r.events('credit').find((e) => e.paymentId === id);
    const logged = timeoutLogs.find((e) => e.paymentId === id);
    const aborted = r.events('abort').find((e) => e.paymentId === id && e.phase === 'hang');
    if (hang === undefined) problems.push(`${id}: never hung`);
    else if (logged === undefined) problems.push(`${id}: no HANDLER_TIMEOUT log`);
    else if (logged.level !== 'error') problems.push(`${id}: HANDLER_TIMEOUT logged at ${logged.level}, not error`);
    // Not before the deadline (the pipeline's timer starts before the handler prints `hang`)...
    else if (logged.at < hang.at + HANDLER_TIMEOUT_MS - 50) problems.push(`${id}: logged before the deadline`);
    // ...and by a timer, not after the fact: before any later attempt credited the payment.
    else if (credit !== undefined && logged.at > credit.at) problems.push(`${id}: logged only after the credit`);
    if (hang !== undefined && aborted === undefined) problems.push(`${id}: ctx.signal never aborted the hung run`);
    if (credit !== undefined && hang !== undefined && credit.at < hang.at) problems.push(`${id}: credited before`);
  }
  r.report(figures, {
    hung: r.events('hang').length,
    handlerTimeoutMs: HANDLER_TIMEOUT_MS,
    leaseMs: 3000,
    timeoutLogs: timeoutLogs.length,
    abortsOfHungRuns: r.events('abort').filter((e) => e.phase === 'hang').length,
    wallSec: Number(((Date.now() - started) / 1000).toFixed(1)),
  });

  expect(problems).toEqual([]);
  expect(figures.double, `credited twice: ${some(figures.doubleIds)}`).toBe(0);
  expect(figures.lost, `never credited:\n${figures.lostWhy}`).toBe(0);
});
