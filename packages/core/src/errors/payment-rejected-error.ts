import { brandErrorClass } from './brand.js';

/**
 * Throw this from `onPaymentPaid` to reject a payment for good, for example when the paid amount or the
 * token does not match the order. The payment is recorded as handled and answered with 200, so the sender
 * stops retrying something that can never succeed; the rejection is logged as an error. With a
 * transactional store, the handler's own writes are rolled back and the rejection is committed.
 *
 * Any other error is treated as transient: the claim is released and the sender retries.
 *
 * @example
 * ```ts
 * onPaymentPaid: async (event) => {
 *   const order = await db.orders.find(event.orderNo);
 *   if (compareAmounts(event.amount, order.amount) !== 0) {
 *     throw new PaymentRejectedError(`paid ${event.amount}, order wants ${order.amount}`);
 *   }
 *   await db.credit(order, event.paymentId);
 * }
 * ```
 */
export class PaymentRejectedError extends Error {
  override readonly name = 'PaymentRejectedError';
  /** Why the payment was rejected, as given by the handler. */
  readonly reason: string;

  constructor(reason: string, options?: { cause?: unknown }) {
    super(reason, options);
    this.reason = reason;
  }
}

brandErrorClass(PaymentRejectedError, 'PaymentRejectedError');
