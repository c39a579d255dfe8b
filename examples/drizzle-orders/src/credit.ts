import { type AttemptContext, compareAmounts, type PaidPayment, PaymentRejectedError } from '@service-pay/core';
import type { DrizzleTransaction } from '@service-pay/postgres/drizzle';
import { eq } from 'drizzle-orm';
import type { ShopDb } from './database.ts';
import { credits, orders } from './schema.ts';

/** `ctx.tx` of this shop: the Drizzle transaction `DrizzleStore` opened for the delivery. */
export type ShopTx = DrizzleTransaction<ShopDb>;

/** What the credit needs of `ctx`, on the webhook and the reconciliation path alike. */
export type CreditContext = AttemptContext & { tx: ShopTx };

/** The credit's signature: typed on `PaidPayment`, so one function serves the webhook and the reconciler. */
export type CreditPayment = (payment: PaidPayment, ctx: CreditContext) => Promise<void>;

/**
 * The shop's `onPaymentPaid`: checks the payment against its order (token, and amount compared as exact
 * decimals), then writes the credit and marks the order paid, all with Drizzle on `ctx.tx`.
 *
 * `ctx.tx` is the transaction the store opened for this delivery: these writes and the store's record of
 * the payment commit together, or not at all (a throw, a crash or a deadline rolls both back, and the
 * sender's retry finds the payment free). So the insert needs no unique key and no "already credited"
 * check. Never `db.transaction(...)` here: it would commit on its own, and `DrizzleStore` refuses it.
 *
 * A mismatch is a permanent rejection: the sender is told 200 and stops, the writes roll back, and the
 * store commits the rejection with its reason (the order then reads REJECTED).
 */
export const creditOrder: CreditPayment = async (payment, ctx) => {
  // Locked: two payments of one order (or a webhook and a reconciliation of different payments) take turns.
  const [order] = await ctx.tx.select().from(orders).where(eq(orders.id, payment.orderNo)).for('update');
  if (order === undefined) throw new PaymentRejectedError(`no order ${payment.orderNo}`);
  if (order.paymentId !== null && order.paymentId !== payment.paymentId) {
    throw new PaymentRejectedError(`order ${order.id} belongs to payment ${order.paymentId}, not ${payment.paymentId}`);
  }
  if (payment.tokenSymbol !== order.tokenSymbol) {
    throw new PaymentRejectedError(`paid in ${payment.tokenSymbol}, order ${order.id} wants ${order.tokenSymbol}`);
  }
  if (compareAmounts(payment.amount, order.amount) !== 0) {
    throw new PaymentRejectedError(`paid ${payment.amount}, order ${order.id} wants ${order.amount}`);
  }
  await ctx.tx
    .insert(credits)
    .values({ paymentId: payment.paymentId, orderId: order.id, amount: payment.amount, source: ctx.source });
  await ctx.tx.update(orders).set({ status: 'PAID' }).where(eq(orders.id, order.id));
};
