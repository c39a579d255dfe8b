import { afterAll, expect, it } from 'vitest';
import type { FaultAppProcess } from './support/fault-app-process.js';
import { FaultRun, sleep, some } from './support/fault-run.js';

/**
 * Guarantees table, row 5: an app SIGKILLed mid-handler, sender retrying for 25 s -> 0 lost.
 *
 * 20 payments over a Fastify and an Express process, 10 each; handlers work 3 s before they write. Once
 * all 10 of the Fastify process's handlers are at work it is SIGKILLed, and 1 s later started again on
 * the same port, as a process manager would. The sender retries 8 times from 0.2 s doubling (about 25 s).
 * The dead process's claims are still in Redis: they must expire within the sender's window, so the
 * retries reach a handler again (before v2: 6 of 6 lost with the 60 s default lease). Every handler
 * option is left at its default. The handlers die before they write, so a double would be a fault of
 * the pipeline, not of the lease store's limits: that is asserted too.
 */
const PAYMENTS = 20;
const DELAY_MS = 3_000;

let run: FaultRun | undefined;
afterAll(async () => {
  await run?.stop();
});

it('SIGKILLs an app while its handlers work, the sender retrying for 25 s: 0 lost', async () => {
  run = await FaultRun.start({
    name: 'e-app-killed-mid-handler',
    apps: ['fastify', 'express'],
    appEnv: { FAULT_DELAY_MS: String(DELAY_MS) },
    retry: { maxAttempts: 8, baseDelayMs: 200, factor: 2, timeoutMs: 5_000 },
  });
  const r = run;
  const [victim, survivor] = r.apps as [FaultAppProcess, FaultAppProcess];
  const ids = await r.createPayments(PAYMENTS);
  const started = Date.now();
  await r.pay(ids, (_id, i) => ({ deliverTo: [(i % 2 === 0 ? victim : survivor).webhookUrl] }));

  const onVictim = ids.filter((_id, i) => i % 2 === 0);
  await victim.until(
    (events) => onVictim.every((id) => events.some((e) => e.ev === 'run' && e.paymentId === id)),
    10_000,
    'every handler of the victim to start',
  );
  await sleep(500);
  const writtenBeforeKill = victim.of('credit').length;
  await victim.kill();
  await sleep(1_000);
  await victim.restart();

  await r.sim.waitForIdle({ timeoutMs: 150_000 });
  const figures = await r.figures(ids);
  const credits = await r.credits();
  const victimLost = onVictim.filter((id) => (credits.get(id) ?? 0) === 0);
  r.report(figures, {
    kills: 1,
    killedMidHandler: onVictim.length,
    writtenBeforeKill,
    victimPaymentsLost: victimLost.length,
    senderWindowSec: (200 * (2 ** 7 - 1)) / 1000,
    wallSec: Number(((Date.now() - started) / 1000).toFixed(1)),
  });

  expect(writtenBeforeKill).toBe(0); // killed mid-handler, before any write
  expect(figures.lost, `never credited:\n${figures.lostWhy}`).toBe(0);
  expect(figures.double, `credited twice: ${some(figures.doubleIds)}`).toBe(0);
});
