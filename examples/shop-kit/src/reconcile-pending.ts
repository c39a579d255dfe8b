import type { ReconcileReport, Reconciler } from '@service-pay/core';
import type { OrderBook } from './orders.ts';

/** Which pending orders a pass reads back, and how many at once. */
export interface ReconcilePassOptions {
  /** Only orders pending at least this long: younger ones may still get their webhook. Default 60 s. */
  olderThanMs?: number;
  /** Orders older than this are left alone (never paid, most likely). Default one day. */
  notOlderThanMs?: number;
  /** Payments read and credited at once. Default: the shop's (1 on PGlite, 4 on PostgreSQL). */
  concurrency?: number;
  /** At most this many orders a pass, oldest first; the next pass takes the rest. Default 500. */
  limit?: number;
}

/** One reconciliation pass: what a pass does, given the shop's reconciler. */
export type ReconcilePass = (options?: ReconcilePassOptions) => Promise<ReconcileReport>;

/**
 * A pass over the orders still pending: reads each one's payment back from the service and credits, once,
 * those it says are PAID (through the same store and credit as the webhook, so a webhook that lands
 * meanwhile is a duplicate, not a second credit).
 *
 * `defaultConcurrency` is 1 on PGlite: it runs one transaction at a time, so more would come back
 * `in-progress` (see the `@service-pay/postgres` README).
 */
export function reconcilePendingOrders(
  book: OrderBook,
  reconciler: Reconciler,
  defaultConcurrency: number,
): ReconcilePass {
  return async (options = {}) => {
    const ids = await book.pendingPaymentIds({
      olderThanMs: options.olderThanMs ?? 60_000,
      notOlderThanMs: options.notOlderThanMs ?? 24 * 3600 * 1000,
      limit: options.limit ?? 500,
    });
    return reconciler.reconcileMany(ids, { concurrency: options.concurrency ?? defaultConcurrency });
  };
}
