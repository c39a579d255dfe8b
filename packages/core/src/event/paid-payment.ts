import type { PaymentPaidEvent } from './payment-paid-event.js';

/**
 * The fields of a paid payment that both a `payment.paid` webhook and a read payment (`GET
 * /v1/payments/:id`) carry, and that a credit depends on. A credit function typed on `PaidPayment` serves
 * the webhook and reconciliation alike.
 *
 * @example
 * ```ts
 * const credit = async (payment: PaidPayment) => orders.credit(payment.orderNo, payment.paymentId, payment.amount);
 * ```
 */
export type PaidPayment = Pick<PaymentPaidEvent, 'paymentId' | 'orderNo' | 'tokenSymbol' | 'amount'>;
