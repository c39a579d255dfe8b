import { expect, it } from 'vitest';
import {
  describeLost,
  describeSlowest,
  type FaultMark,
  type InboxRow,
  type LostKind,
  type LostPayment,
  lostKinds,
  lostPayments,
  type SenderDelivery,
  slowestAck,
} from './lost-payments.js';
import type { AppProcess } from './processes/app-process.js';
import { sleep } from './wait-for.js';

export * from './lost-payments.js';

/**
 * What the fault rows use of `@service-pay/simulator`'s `Simulator`, described here rather than imported:
 * the simulator's own tests use this kit, so a dependency on the simulator would make the workspace a cycle
 * (pnpm warns about it on every install). A real `Simulator` fits this shape.
 */
export interface Simulator {
  createPayment(input: { orderNo: string; notifyUrl: string }): { paymentId: string };
  pay(paymentId: string, options: { duplicates: number; concurrent: boolean; deliverTo: string[] }): Promise<unknown>;
  deliveries(filter: { paymentId: string }): SenderDelivery[];
  waitForIdle(options: { timeoutMs: number }): Promise<void>;
}

/**
 * What the fault rows need of a SQL database of the test's own, whose apps credit through ctx.tx into a
 * `credits` table WITHOUT a unique constraint (a payment credited twice is two rows) and read their faults
 * from a `fault_plan` table.
 */
export interface FaultRowsDatabase {
  /** Asks the apps to misbehave on these payments (`hold`, `slow`, `hang`, `hang-in-sql`, `commit-bomb`). */
  plan(paymentIds: readonly string[], fault: string): Promise<void>;
  /** Credit rows per payment among `paymentIds` (apps named `late` apart), and rows written by `late`. */
  credits(paymentIds: readonly string[]): Promise<{ counts: Map<string, number>; late: number }>;
  /** Credit rows of these payments visible outside their transactions. */
  visibleCredits(paymentIds: readonly string[]): Promise<number>;
  /** The store's inbox rows per payment among `paymentIds` (its outcome, the delivery that wrote it). */
  inbox(paymentIds: readonly string[]): Promise<Map<string, InboxRow[]>>;
  /** Statements still running the fixture's 30 s sleep (a handler past its deadline left them behind). */
  sleepingStatements(): Promise<number>;
  /** A crash of the server (every session killed at once, no shutdown), then a start on the same data. */
  crashAndRestart(): Promise<void>;
}

/** One run of the fault rows: the store under test, its database, the sender, and its apps. */
export interface FaultRowsRun {
  /** Names the store in each row's figures line (`pg`, `kysely`, `mysql2`, ...). */
  label: string;
  /** The database's name in the row titles: `PostgreSQL`, `MariaDB`. */
  databaseName: string;
  /** How the crash row crashes it, for its title: `stopped with -m immediate`, `killed (-9)`. */
  crash: string;
  database(): FaultRowsDatabase;
  /** The sender, retrying on `FAULT_RETRY`. */
  sim(): Simulator;
  /**
   * A second sender on the same merchant, retrying on `RESTART_RETRY`: row b's, whose app is restarted, and
   * row c's where `appsMayDie`.
   */
  restartSim(): Simulator;
  /** The three app processes; the rows replace one that they kill or that dies. */
  apps(): AppProcess[];
  /** Starts an app named `instance` on `port` (0: any), as a supervisor would. */
  startApp(instance: string, port: number): Promise<AppProcess>;
  /** Whether the database fails a COMMIT on demand (PostgreSQL's deferred trigger; InnoDB checks per statement). */
  commitFailure: boolean;
  /** Whether an app may die in the crash row (a client whose own timer throws when its socket dies). */
  appsMayDie?: boolean;
}

/** What one row measured; printed as one JSON line. */
export interface FaultFigures {
  scenario: string;
  payments: number;
  double: number;
  lost: number;
  /** The lost payments by kind (`{ 'sender-gave-up': 4 }`): a defect of the SDK, or the sender giving up. */
  lostKinds: Partial<Record<LostKind, number>>;
  attempts: number;
  /** The most attempts a delivery took to be answered 2xx: the retries the row used, of the sender's 8. */
  slowestAck: number;
  /**
   * From the row's first fault mark to its last: the held payments sent to the app's restart (b), the
   * server's crash to its restart (c). The sender's retries must outlast it.
   */
  faultMs?: number;
  /** "409 DELIVERY_IN_PROGRESS", "200", "network-error": what the sender saw, counted. */
  statuses: Record<string, number>;
}

/**
 * The sender's retries in the fault rows: the spec's 8 attempts with doubling backoff, from 0.2 s instead of
 * 1 s (about 25 s in all), so that a row whose faults last a second or two ends in seconds.
 *
 * @example
 * ```ts
 * const sim = await startSimulator({ merchants: [merchant], retry: FAULT_RETRY });
 * ```
 */
export const FAULT_RETRY = { maxAttempts: 8, baseDelayMs: 200, factor: 2, timeoutMs: 5_000 } as const;

/**
 * The retries of the row whose app is SIGKILLed and started again (b): the same 8 attempts from 0.8 s,
 * about 100 s in all. The payments held by the killed app are retried only at its port, from the moment
 * they are sent: through the wait until all of them hold, then through the restart, a new Node process
 * loading tsx and its clients, which is not on the sender's faster clock. Under load that took 40 s, past
 * the last of FAULT_RETRY's attempts, and the held payments were reported lost with every attempt refused
 * at the dead port, which says nothing of the SDK. From 0.8 s the last attempt comes about 100 s after the
 * first: past the longest the row lets both take (30 s to hold, AppProcess's 60 s bound on a start).
 *
 * @example
 * ```ts
 * const restartSim = await startSimulator({ merchants: [merchant], retry: RESTART_RETRY });
 * ```
 */
export const RESTART_RETRY = { ...FAULT_RETRY, baseDelayMs: 800 } as const;

/**
 * Pays each payment with `deliveries` simultaneous deliveries spread over `urls`, rotated per payment so
 * every app gets first deliveries.
 *
 * @example
 * ```ts
 * await pay(sim, paymentIds, 5, apps.map((app) => app.url));
 * ```
 */
export async function pay(sim: Simulator, paymentIds: string[], deliveries: number, urls: string[]): Promise<void> {
  await Promise.all(
    paymentIds.map((id, i) =>
      sim.pay(id, {
        duplicates: deliveries - 1,
        concurrent: true,
        deliverTo:
          deliveries === 1
            ? [urls[i % urls.length] as string]
            : urls.map((_, k) => urls[(i + k) % urls.length] as string),
      }),
    ),
  );
}

/**
 * What the sender saw for these payments: its attempts, each attempt's error code (`''` for none), and the
 * attempts counted by status and code (`"409 DELIVERY_IN_PROGRESS"`, `"200"`, `"network-error"`).
 *
 * @example
 * ```ts
 * const { attempts, statuses } = senderTally(sim, paymentIds);
 * ```
 */
export function senderTally(
  sim: Simulator,
  paymentIds: readonly string[],
): { attempts: number; codes: string[]; statuses: Record<string, number> } {
  const attempts = paymentIds.flatMap((id) => sim.deliveries({ paymentId: id }).flatMap((d) => d.attempts));
  const codes = attempts.map((a) => {
    try {
      return String((JSON.parse(a.responseBody) as { error?: unknown }).error ?? '');
    } catch {
      return '';
    }
  });
  const statuses: Record<string, number> = {};
  attempts.forEach((a, i) => {
    const key = [a.status ?? a.outcome, codes[i]].filter(Boolean).join(' ');
    statuses[key] = (statuses[key] ?? 0) + 1;
  });
  return { attempts: attempts.length, codes, statuses };
}

/** What a row measured, with the codes the sender saw and the lost payments in words. */
type RowFigures = FaultFigures & { codes: string[]; lostPayments: LostPayment[]; diagnosis: string };

/**
 * Waits for the sender to finish, counts credits per payment, prints one JSON line and, for each payment
 * without a credit, why (`describeLost`: the sender's attempts set against the row's fault `marks`, the
 * store's inbox row) with the last lines the apps wrote on stderr; returns it all.
 */
async function figures(
  run: FaultRowsRun,
  scenario: string,
  paymentIds: string[],
  marks: readonly FaultMark[] = [],
  sim: Simulator = run.sim(),
): Promise<RowFigures> {
  await sim.waitForIdle({ timeoutMs: 90_000 });
  const { counts, late } = await run.database().credits(paymentIds);
  const lost = lostPayments(
    paymentIds,
    counts,
    (id) => sim.deliveries({ paymentId: id }),
    paymentIds.some((id) => (counts.get(id) ?? 0) === 0) ? await run.database().inbox(paymentIds) : new Map(),
  );
  const { attempts, codes, statuses } = senderTally(sim, paymentIds);
  const result = {
    scenario: `${run.label} ${scenario}`,
    payments: paymentIds.length,
    double: paymentIds.filter((id) => (counts.get(id) ?? 0) > 1).length + late,
    lost: lost.length,
    lostKinds: lostKinds(lost),
    attempts,
    slowestAck: slowestAck(paymentIds.flatMap((id) => sim.deliveries({ paymentId: id }))),
    ...(marks.length > 1 ? { faultMs: (marks.at(-1)?.at ?? 0) - (marks[0]?.at ?? 0) } : {}),
    statuses,
  };
  console.log(JSON.stringify(result));
  const slowest = describeSlowest(
    paymentIds.flatMap((id) => sim.deliveries({ paymentId: id })),
    marks,
  );
  if (slowest !== '') console.log(slowest);
  let diagnosis = describeLost(lost, marks);
  if (lost.length > 0) {
    const apps = run.apps().map((app) => `[app on ${app.port}, stderr]\n${app.stderr.slice(-15).join('\n')}`);
    diagnosis = [diagnosis, ...apps].join('\n');
    console.log(diagnosis);
  }
  return { ...result, codes, lostPayments: lost, diagnosis };
}

/**
 * The SQL stores' fault rows, as tests of the caller's `describe`: three app processes sharing one database
 * server of the test's own, the simulator as the sender with the spec's retries on a faster clock
 * (`FAULT_RETRY`; `RESTART_RETRY` for row b). Every row must end with 0 double and 0 lost, and prints, for
 * each payment without a credit, whether the app acknowledged it without one (a defect of the SDK) or the
 * sender gave up after its attempts were refused, with those attempts:
 * a. 5 simultaneous deliveries of every payment over the 3 processes;
 * b. an app SIGKILLed while its handler holds the transaction with the credit written;
 * c. the database server crashed and restarted while handlers run;
 * d. a COMMIT that fails (where the database can fail one on demand);
 * e. handlers past their deadline, in the app and inside a statement.
 *
 * @example
 * ```ts
 * describe('KyselyStore under faults', () => {
 *   faultRows({ label: 'kysely', databaseName: 'MariaDB', crash: 'killed (-9)', commitFailure: false, ... });
 * });
 * ```
 */
export function faultRows(run: FaultRowsRun): void {
  const createPayments = (count: number, label: string, sim = run.sim()): string[] =>
    Array.from(
      { length: count },
      (_, i) => sim.createPayment({ orderNo: `${label}-${i}-${Date.now()}`, notifyUrl: run.apps()[0]!.url }).paymentId,
    );
  const urls = () => run.apps().map((a) => a.url);
  // Every row's fault ends well inside its sender's retries (a database down for a second or two within
  // FAULT_RETRY's 25 s, an app restart within RESTART_RETRY's 100 s): a payment the sender gave up on fails
  // the row as one acknowledged without a credit does, and the failure says which of the two it was.
  const zero = (f: RowFigures) =>
    expect({ double: f.double, lost: f.lostKinds }, f.diagnosis).toEqual({ double: 0, lost: {} });

  it(`a. 5 simultaneous deliveries of every payment over 3 processes: 0 double, 0 lost`, async () => {
    const ids = createPayments(40, 'simultaneous');
    await pay(run.sim(), ids, 5, urls());
    const f = await figures(run, 'a. 5 simultaneous deliveries x 3 processes', ids);
    zero(f);
    // The race was real: deliveries found the payment held by another process and were answered 409.
    expect(f.statuses['409 DELIVERY_IN_PROGRESS'] ?? 0).toBeGreaterThan(0);
  });

  // Its own timeout, above RESTART_RETRY's 100 s: a row that runs long fails with its figures, not a timeout.
  it('b. an app SIGKILLed while its handler holds the transaction with the credit written: 0 double, 0 lost', async () => {
    const apps = run.apps();
    const victim = apps[2] as AppProcess;
    // On the restart's slower clock: the held payments are retried only at the killed app's port, so their
    // retries must outlast its restart (RESTART_RETRY).
    const sim = run.restartSim();
    const held = createPayments(4, 'killed', sim);
    const others = createPayments(12, 'beside-kill', sim);
    await run.database().plan(held, 'hold');
    // The held payments' retries start here, not at the kill: the wait for all four to hold counts too.
    const marks: FaultMark[] = [{ what: 'held payments sent', at: Date.now() }];
    await pay(sim, held, 1, [victim.url]);
    await pay(sim, others, 2, urls());
    await victim.holdingAtLeast(held.length);
    // Written but not committed: nothing shows outside the transaction.
    expect(await run.database().visibleCredits(held)).toBe(0);
    marks.push({ what: 'app killed', at: Date.now() });
    await victim.kill();
    // The sender keeps retrying the dead app; it comes back on the same port, as a supervisor restarts it.
    apps[2] = await run.startApp('c2', victim.port);
    marks.push({ what: 'app listening again', at: Date.now() });
    zero(await figures(run, 'b. app SIGKILLed holding the transaction', [...held, ...others], marks, sim));
  }, 150_000);

  // Its own timeout, row b's: where apps may die, it sends on RESTART_RETRY's slower clock too.
  it(`c. the ${run.databaseName} server ${run.crash} and restarted while handlers run: 0 double, 0 lost`, async () => {
    // Where an app may die with the server, its payments are retried only at its port until the supervisor
    // below has started it again: a new process, not on FAULT_RETRY's faster clock (under load, 12 s
    // unreachable met a payment's last attempt 24 s after the crash). Those runs send on RESTART_RETRY's,
    // as row b does for the same reason; the others keep the faster one, which outlasts a server down for
    // a second or two.
    const sim = run.appsMayDie === true ? run.restartSim() : run.sim();
    const slow = createPayments(6, 'slow-at-crash', sim);
    const others = createPayments(24, 'beside-crash', sim);
    await run.database().plan(slow, 'slow');
    await pay(sim, slow, 2, urls());
    await pay(sim, others, 2, urls());
    await Promise.race(run.apps().map((app) => app.holdingAtLeast(1)));
    const marks: FaultMark[] = [{ what: 'crash', at: Date.now() }];
    await run.database().crashAndRestart();
    marks.push({ what: 'restarted', at: Date.now() });
    // A supervisor restarts an app that died, on its port.
    let restarts = 0;
    // How each app that died ended, with its last words: the failure names why, not only how many.
    const deaths: string[] = [];
    const supervisor = setInterval(() => {
      const apps = run.apps();
      apps.forEach((app, i) => {
        if (app.alive || app.restarting) return;
        app.restarting = true;
        restarts++;
        deaths.push(`app ${i} on ${app.port}: ${app.ended}; its stderr ended:\n${app.stderr.slice(-40).join('\n')}`);
        void run.startApp(`c${i}-restarted`, app.port).then((started) => {
          apps[i] = started;
        });
      });
    }, 100);
    try {
      zero(await figures(run, `c. ${run.databaseName} ${run.crash} and restarted`, [...slow, ...others], marks, sim));
    } finally {
      clearInterval(supervisor);
    }
    console.log(JSON.stringify({ scenario: `${run.label} c.`, appRestarts: restarts }));
    if (!run.appsMayDie) expect(restarts, deaths.join('\n\n')).toBe(0);
  }, 150_000);

  if (run.commitFailure) {
    it('d. a COMMIT that fails (deferred constraint trigger): 500 COMMIT_FAILED, nothing credited, then once', async () => {
      const bombed = createPayments(8, 'commit-bomb');
      await run.database().plan(bombed, 'commit-bomb');
      await pay(run.sim(), bombed, 1, urls());
      const f = await figures(run, 'd. COMMIT fails at the deferred trigger', bombed);
      zero(f);
      expect(f.codes.filter((c) => c === 'COMMIT_FAILED')).toHaveLength(bombed.length);
    });
  }

  it('e. handlers past their deadline (in the app, and inside a statement): rolled back, credited once later', async () => {
    const hung = createPayments(4, 'hang');
    const hungInSql = createPayments(4, 'hang-in-sql');
    await run.database().plan(hung, 'hang');
    await run.database().plan(hungInSql, 'hang-in-sql');
    await pay(run.sim(), [...hung, ...hungInSql], 1, urls());
    const f = await figures(run, 'e. handler past its deadline', [...hung, ...hungInSql]);
    zero(f);
    // Each payment's first attempt is the one that hangs, answered 500 HANDLER_TIMEOUT about a second later.
    // A sender that gave up first (its 5 s timeout, on a machine loaded enough to delay the answer that
    // long) was told nothing: said, and not counted. Any other answer fails the row, naming what it was.
    const firsts = [...hung, ...hungInSql].map((id) => ({
      id,
      first: run.sim().deliveries({ paymentId: id })[0]?.attempts[0],
    }));
    const said = ({ id, first }: (typeof firsts)[number]) =>
      first === undefined
        ? `${id}: no attempt`
        : `${id}: ${first.outcome} ${first.status ?? ''} after ${first.latencyMs} ms: ${first.error ?? first.responseBody}`;
    const gaveUp = firsts.filter(({ first }) => first?.outcome === 'timeout');
    if (gaveUp.length > 0)
      console.log(`the sender gave up before the deadline's answer:\n${gaveUp.map(said).join('\n')}`);
    const unlike = firsts.filter(
      ({ first }) =>
        first === undefined || (first.outcome !== 'timeout' && !first.responseBody.includes('"HANDLER_TIMEOUT"')),
    );
    expect(unlike.map(said), 'first attempts not answered 500 HANDLER_TIMEOUT').toEqual([]);
    expect(f.codes.filter((c) => c === 'HANDLER_TIMEOUT').length).toBe(hung.length + hungInSql.length - gaveUp.length);
    // The stuck statements were ended with their sessions, not left running with the keys.
    expect(await run.database().sleepingStatements()).toBe(0);
  });
}

/** The crash row's pause between the crash and the restart: long enough for the apps to see it. */
export const CRASH_DOWN_MS = 1_000;

/** Crashes with `crash`, waits CRASH_DOWN_MS, starts again with `start`. */
export async function crashFor(crash: () => Promise<void>, start: () => Promise<void>): Promise<void> {
  await crash();
  await sleep(CRASH_DOWN_MS);
  await start();
}
