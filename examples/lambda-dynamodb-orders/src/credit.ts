import { randomUUID } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { type AttemptContext, compareAmounts, type PaidPayment, PaymentRejectedError } from '@service-pay/core';
import type { DocumentWrites, DynamoDbTransaction } from '@service-pay/dynamodb';
import type { ShopDeps } from './shop.ts';

/** `ctx.tx` of this shop: the writes queued for the delivery's TransactWriteItems, in plain values. */
export type ShopTx = DynamoDbTransaction<DocumentWrites>;

/** What the credit needs of `ctx`, on the webhook and the reconciliation path alike. */
export type CreditContext = AttemptContext & { tx: ShopTx };

/**
 * The shop's `onPaymentPaid`: reads the order, checks the payment against it (token, and amount compared as
 * exact decimals), then queues the credit and the order's new status on `ctx.tx`.
 *
 * Nothing is written until the handler returns: the store sends these writes with its record of the
 * payment in one TransactWriteItems, conditioned on this delivery still holding the payment, so they
 * commit together or not at all (a throw, a crash or a deadline writes nothing, and the sender's retry
 * finds the payment free). The credit item needs no unique key. Never `documentClient.send(new PutCommand(...))`
 * here: it would be written whatever happens to the delivery, and the store refuses it
 * (WRITE_OUTSIDE_TRANSACTION).
 *
 * A mismatch is a permanent rejection: the sender is told 200 and stops, the queued writes are dropped, and
 * the store records the rejection with its reason (the order then reads REJECTED).
 */
export function creditOrder(deps: ShopDeps) {
  return async (payment: PaidPayment, ctx: CreditContext): Promise<void> => {
    // Reads go through the shop's client as usual; a consistent read sees the last committed credit.
    const { Item: order } = await deps.documentClient.send(
      new GetCommand({ TableName: deps.tables.orders, Key: { id: payment.orderNo }, ConsistentRead: true }),
    );
    if (order === undefined) throw new PaymentRejectedError(`no order ${payment.orderNo}`);
    if (order.paymentId !== undefined && order.paymentId !== payment.paymentId) {
      throw new PaymentRejectedError(
        `order ${order.id} belongs to payment ${order.paymentId}, not ${payment.paymentId}`,
      );
    }
    if (payment.tokenSymbol !== order.tokenSymbol) {
      throw new PaymentRejectedError(`paid in ${payment.tokenSymbol}, order ${order.id} wants ${order.tokenSymbol}`);
    }
    if (compareAmounts(payment.amount, order.amount) !== 0) {
      throw new PaymentRejectedError(`paid ${payment.amount}, order ${order.id} wants ${order.amount}`);
    }
    ctx.tx.put({
      TableName: deps.tables.credits,
      Item: {
        orderId: order.id,
        creditId: randomUUID(),
        paymentId: payment.paymentId,
        amount: payment.amount,
        source: ctx.source,
      },
    });
    ctx.tx.update({
      TableName: deps.tables.orders,
      Key: { id: order.id },
      UpdateExpression: 'SET #status = :paid',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: { ':paid': 'PAID' },
    });
  };
}
