import {
  compareAmounts,
  type PaymentPaidContext,
  type PaymentPaidEvent,
  PaymentRejectedError,
} from '@service-pay/core';
import type { OrderBook } from './orders.ts';

/** What happened to each `payment.paid` the shop handled, for the demo's table and the chaos suite. */
export interface CreditTally {
  /** Credits written. */
  credited: number;
  /** Deliveries the dedupe store let through but the database's unique paymentId stopped. */
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
 * The shop's `onPaymentPaid`: checks the payment against the order (token, and amount with exact decimal
 * comparison), then credits it in one transaction guarded by the unique paymentId. A mismatch is a
 * permanent rejection (`PaymentRejectedError`): the sender is told 200 and stops retrying, the order is
 * marked REJECTED for a person to look at, nothing is credited.
 */
export function creditOnPaymentPaid(book: OrderBook, options: CreditOptions = {}) {
  const tally: CreditTally = { credited: 0, caughtByDatabase: 0, rejected: 0, injectedFailures: 0 };
  const failureRate = options.failureRate ?? 0;

  const reject = async (orderId: string | undefined, reason: string): Promise<never> => {
    tally.rejected++;
    if (orderId !== undefined) await book.reject(orderId);
    throw new PaymentRejectedError(reason);
  };

  const onPaymentPaid = async (event: PaymentPaidEvent, ctx: PaymentPaidContext): Promise<void> => {
    if (failureRate > 0 && Math.random() < failureRate) {
      tally.injectedFailures++;
      throw new Error('injected transient failure (chaos testing)');
    }
    const order = await book.get(event.orderNo);
    if (order === undefined) return reject(undefined, `no order ${event.orderNo}`);
    if (order.paymentId !== null && order.paymentId !== event.paymentId) {
      return reject(order.id, `order ${order.id} belongs to payment ${order.paymentId}, not ${event.paymentId}`);
    }
    if (event.tokenSymbol !== order.tokenSymbol) {
      return reject(order.id, `paid in ${event.tokenSymbol}, order ${order.id} wants ${order.tokenSymbol}`);
    }
    if (compareAmounts(event.amount, order.amount) !== 0) {
      return reject(order.id, `paid ${event.amount}, order ${order.id} wants ${order.amount}`);
    }
    const outcome = await book.credit(
      { orderId: order.id, paymentId: event.paymentId, amount: event.amount, txId: event.txId },
      // Last thing inside the transaction: confirm the lease is still ours. If it was lost, another
      // delivery may be crediting now, and this throws, so the transaction rolls back.
      () => ctx.confirmLease(),
    );
    if (outcome === 'credited') tally.credited++;
    else tally.caughtByDatabase++;
  };

  return { onPaymentPaid, tally };
}
