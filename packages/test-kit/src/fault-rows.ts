import { expect, it } from 'vitest';
import type { AppProcess } from './processes/app-process.js';
import { sleep } from './wait-for.js';

/**
 * What the fault rows use of `@service-pay/simulator`'s `Simulator`, described here rather than imported:
 * the simulator's own tests use this kit, so a dependency on the simulator would make the workspace a cycle
 * (pnpm warns about it on every install). A real `Simulator` fits this shape.
 */
export interface Simulator {
  createPayment(input: { orderNo: string; notifyUrl: string }): { paymentId: string };
  pay(paymentId: string, options: { duplicates: number; concurrent: boolean; deliverTo: string[] }): Promise<unknown>;
  deliveries(filter: { paymentId: string }): Array<{
    attempts: ReadonlyArray<{ status?: number | null | undefined; outcome?: string; responseBody: string }>;
  }>;
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
  sim(): Simulator;
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
  attempts: number;
  /** "409 DELIVERY_IN_PROGRESS", "200", "network-error": what the sender saw, counted. */
  statuses: Record<string, number>;
}

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

/** Waits for the sender to finish, counts credits per payment, prints one JSON line, and returns it. */
async function figures(
  run: FaultRowsRun,
  scenario: string,
  paymentIds: string[],
): Promise<FaultFigures & { codes: string[] }> {
  const sim = run.sim();
  await sim.waitForIdle({ timeoutMs: 90_000 });
  const { counts, late } = await run.database().credits(paymentIds);
  const { attempts, codes, statuses } = senderTally(sim, paymentIds);
  const result = {
    scenario: `${run.label} ${scenario}`,
    payments: paymentIds.length,
    double: paymentIds.filter((id) => (counts.get(id) ?? 0) > 1).length + late,
    lost: paymentIds.filter((id) => (counts.get(id) ?? 0) === 0).length,
    attempts,
    statuses,
  };
  console.log(JSON.stringify(result));
  return { ...result, codes };
}

/**
 * The SQL stores' fault rows, as tests of the caller's `describe`: three app processes sharing one database
 * server of the test's own, the simulator as the sender with the spec's retries on a faster clock. Every row
 * must end with 0 double and 0 lost:
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
  const createPayments = (count: number, label: string): string[] =>
    Array.from(
      { length: count },
      (_, i) =>
        run.sim().createPayment({ orderNo: `${label}-${i}-${Date.now()}`, notifyUrl: run.apps()[0]!.url }).paymentId,
    );
  const urls = () => run.apps().map((a) => a.url);
  const zero = (f: FaultFigures) => expect({ double: f.double, lost: f.lost }).toEqual({ double: 0, lost: 0 });

  it(`a. 5 simultaneous deliveries of every payment over 3 processes: 0 double, 0 lost`, async () => {
    const ids = createPayments(40, 'simultaneous');
    await pay(run.sim(), ids, 5, urls());
    const f = await figures(run, 'a. 5 simultaneous deliveries x 3 processes', ids);
    zero(f);
    // The race was real: deliveries found the payment held by another process and were answered 409.
    expect(f.statuses['409 DELIVERY_IN_PROGRESS'] ?? 0).toBeGreaterThan(0);
  });

  it('b. an app SIGKILLed while its handler holds the transaction with the credit written: 0 double, 0 lost', async () => {
    const apps = run.apps();
    const victim = apps[2] as AppProcess;
    const held = createPayments(4, 'killed');
    const others = createPayments(12, 'beside-kill');
    await run.database().plan(held, 'hold');
    await pay(run.sim(), held, 1, [victim.url]);
    await pay(run.sim(), others, 2, urls());
    await victim.holdingAtLeast(held.length);
    // Written but not committed: nothing shows outside the transaction.
    expect(await run.database().visibleCredits(held)).toBe(0);
    await victim.kill();
    // The sender keeps retrying the dead app; it comes back on the same port, as a supervisor restarts it.
    apps[2] = await run.startApp('c2', victim.port);
    zero(await figures(run, 'b. app SIGKILLed holding the transaction', [...held, ...others]));
  });

  it(`c. the ${run.databaseName} server ${run.crash} and restarted while handlers run: 0 double, 0 lost`, async () => {
    const slow = createPayments(6, 'slow-at-crash');
    const others = createPayments(24, 'beside-crash');
    await run.database().plan(slow, 'slow');
    await pay(run.sim(), slow, 2, urls());
    await pay(run.sim(), others, 2, urls());
    await Promise.race(run.apps().map((app) => app.holdingAtLeast(1)));
    await run.database().crashAndRestart();
    // A supervisor restarts an app that died, on its port.
    let restarts = 0;
    const supervisor = setInterval(() => {
      const apps = run.apps();
      apps.forEach((app, i) => {
        if (app.alive || app.restarting) return;
        app.restarting = true;
        restarts++;
        void run.startApp(`c${i}-restarted`, app.port).then((started) => {
          apps[i] = started;
        });
      });
    }, 100);
    try {
      zero(await figures(run, `c. ${run.databaseName} ${run.crash} and restarted`, [...slow, ...others]));
    } finally {
      clearInterval(supervisor);
    }
    console.log(JSON.stringify({ scenario: `${run.label} c.`, appRestarts: restarts }));
    if (!run.appsMayDie) expect(restarts).toBe(0);
  });

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
    expect(f.codes.filter((c) => c === 'HANDLER_TIMEOUT')).toHaveLength(hung.length + hungInSql.length);
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
