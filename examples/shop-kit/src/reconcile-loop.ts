import type { ReconcileReport } from '@service-pay/core';
import type { ReconcilePass, ReconcilePassOptions } from './reconcile-pending.ts';

/** A running reconcile loop. */
export interface ReconcileLoop {
  /** Stops the loop; resolves once a pass under way has finished. */
  stop(): Promise<void>;
}

export interface ReconcileLoopOptions extends ReconcilePassOptions {
  /** Time between the end of one pass and the start of the next. Default 60 s. */
  everyMs?: number;
  /** Called with each pass's report (the counts say what it recovered). Default: `printReconcileReport`. */
  onReport?: (report: ReconcileReport) => void;
  /** Called when a pass could not run (the database down, say); the loop goes on. Default: one line on stderr. */
  onError?: (error: unknown) => void;
}

/**
 * Runs `pass` every `everyMs` until stopped: the orders whose webhooks never arrived get credited within
 * about two minutes (a minute to count as late, up to a minute to the next pass).
 *
 * Each pass is scheduled when the previous one ends, so passes never overlap however slow the service is.
 * The timer does not keep the process alive: the loop lives as long as the app's server does.
 */
export function startReconcileLoop(pass: ReconcilePass, options: ReconcileLoopOptions = {}): ReconcileLoop {
  const {
    everyMs = 60_000,
    onReport = printReconcileReport,
    onError = printReconcileFailure,
    ...passOptions
  } = options;
  if (!(Number.isFinite(everyMs) && everyMs > 0)) throw new RangeError('everyMs must be a number of milliseconds > 0.');
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();

  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      running = (async () => {
        try {
          onReport(await pass(passOptions));
        } catch (error) {
          onError(error);
        }
      })();
      // Never rejects unless onError throws; the loop goes on either way.
      void running.catch(() => {}).then(schedule);
    }, everyMs);
    timer.unref();
  };
  schedule();

  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running.catch(() => {});
    },
  };
}

/** One JSON line per pass that found pending orders: `{"reconciled":{"credited":1,"not-paid":3,...}}`. */
export function printReconcileReport(report: ReconcileReport): void {
  if (report.results.length > 0) console.log(JSON.stringify({ reconciled: report.counts }));
}

function printReconcileFailure(error: unknown): void {
  console.error(JSON.stringify({ reconcileFailed: error instanceof Error ? error.message : String(error) }));
}
