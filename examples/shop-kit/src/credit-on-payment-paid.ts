import { type AttemptContext, compareAmounts, type PaidPayment, PaymentRejectedError } from '@service-pay/core';
import type { Database, Queryable } from './database.ts';
import type { CreditGuard, OrderBook } from './orders.ts';

/** What happened to each payment the shop handled, for the demo's table and the chaos suite. */
export interface CreditTally {
  /** Credits written (with `PostgresStore`: written in a transaction that then went to commit). */
  credited: number;
  /** Deliveries the lease store let through but the database's unique paymentId stopped. */
  caughtByDatabase: number;
  /** Payments rejected for good (wrong amount or token, unknown order, order paid by another payment). */
  rejected: number;
  /** Injected transient failures (chaos testing only). */
  injectedFailures: number;
}

export interface CreditOptions {
  /** Chaos testing only: the share of calls that fail before crediting, as a flaky database would. */
  failureRate?: number;
}

/**
 * What the credit needs of `ctx`, on the webhook and the reconciliation path alike: `tx` is there when the
 * store is transactional (`PostgresStore`).
 */
export type CreditContext = AttemptContext & { tx?: Queryable };

/** The credit's signature: typed on `PaidPayment`, so one function serves the webhook and the reconciler. */
export type CreditPayment = (payment: PaidPayment, ctx: CreditContext) => Promise<void>;

type Verdict = { outcome: 'credited' | 'already-credited' } | { outcome: 'rejected'; orderId?: string; reason: string };

/**
 * The shop's `onPaymentPaid`, for webhooks and reconciliation: checks the payment against the order (token,
 * and amount with exact decimal comparison), then credits it in one transaction.
 *
 * With `PostgresStore`, that transaction is the store's (`ctx.tx`): the credit and the store's record of the
 * payment commit together or not at all. With a lease store (Redis), the credit opens its own, and the
 * unique paymentId of `credits` catches what the store let through twice.
 *
 * A mismatch is a permanent rejection (`PaymentRejectedError`): the sender is told 200 and stops retrying,
 * nothing is credited, and the order reads REJECTED for a person to look at (with `PostgresStore`, from the
 * rejection the store commits; with a lease store, marked here).
 */
export function creditOnPaymentPaid(book: OrderBook, database: Database, options: CreditOptions = {}) {
  const tally: CreditTally = { credited: 0, caughtByDatabase: 0, rejected: 0, injectedFailures: 0 };
  const failureRate = options.failureRate ?? 0;

  const creditIn = async (tx: Queryable, payment: PaidPayment, ctx: CreditContext, guard: CreditGuard) => {
    const order = await book.lockForCredit(tx, payment.orderNo);
    const reject = (reason: string): Verdict => ({ outcome: 'rejected', reason, ...(order && { orderId: order.id }) });
    if (order === undefined) return reject(`no order ${payment.orderNo}`);
    if (order.paymentId !== null && order.paymentId !== payment.paymentId) {
      return reject(`order ${order.id} belongs to payment ${order.paymentId}, not ${payment.paymentId}`);
    }
    if (payment.tokenSymbol !== order.tokenSymbol) {
      return reject(`paid in ${payment.tokenSymbol}, order ${order.id} wants ${order.tokenSymbol}`);
    }
    if (compareAmounts(payment.amount, order.amount) !== 0) {
      return reject(`paid ${payment.amount}, order ${order.id} wants ${order.amount}`);
    }
    const input = { orderId: order.id, paymentId: payment.paymentId, amount: payment.amount, source: ctx.source };
    const outcome = await book.credit(tx, input, guard);
    // Last thing inside the transaction: confirm this attempt still holds the payment. If a lease was lost,
    // another attempt may be crediting now, and this throws, so the transaction rolls back.
    await ctx.confirmLease();
    return { outcome } satisfies Verdict;
  };

  const onPaymentPaid: CreditPayment = async (payment, ctx) => {
    if (failureRate > 0 && Math.random() < failureRate) {
      tally.injectedFailures++;
      throw new Error('injected transient failure (chaos testing)');
    }
    const verdict: Verdict = ctx.tx
      ? await creditIn(ctx.tx, payment, ctx, 'inbox')
      : await database.transaction((tx) => creditIn(tx, payment, ctx, 'unique-payment-id'));
    if (verdict.outcome === 'rejected') {
      tally.rejected++;
      // A transactional store rolls the handler's writes back and commits the rejection with its reason.
      if (!ctx.tx && verdict.orderId !== undefined) await book.reject(verdict.orderId);
      throw new PaymentRejectedError(verdict.reason);
    }
    if (verdict.outcome === 'credited') tally.credited++;
    else tally.caughtByDatabase++;
  };

  return { onPaymentPaid, tally };
}
