import { type PaymentPaidContext, PaymentRejectedError } from '@service-pay/core';
import { samplePaymentPaidEvent } from '@service-pay/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { creditOnPaymentPaid, type Database, OrderBook, openDatabase } from '../src/index.ts';

let db: Database;
let book: OrderBook;
beforeAll(async () => {
  db = await openDatabase();
  book = await OrderBook.open(db);
});
afterAll(() => db.close());

const ctx = (aborted = false): PaymentPaidContext => {
  const controller = new AbortController();
  if (aborted) controller.abort(new Error('lease lost'));
  return {
    deliveryId: 'dl_test',
    timestamp: 0,
    source: 'webhook',
    signal: controller.signal,
    confirmLease: async () => {
      if (controller.signal.aborted) throw controller.signal.reason;
    },
  };
};

async function paidOrder(amount = '12.50', tokenSymbol = 'USDT') {
  const event = samplePaymentPaidEvent({ amount, tokenSymbol });
  await book.create({ id: event.orderNo, amount, tokenSymbol });
  await book.attachPayment(event.orderNo, event.paymentId);
  return event;
}

describe('the shop credit (PGlite)', () => {
  it('credits once; the database catches a second credit of the same payment', async () => {
    const { onPaymentPaid, tally } = creditOnPaymentPaid(book);
    const event = await paidOrder();
    await onPaymentPaid(event, ctx());
    await onPaymentPaid(event, ctx());
    expect(tally).toMatchObject({ credited: 1, caughtByDatabase: 1 });
    expect(await book.get(event.orderNo)).toMatchObject({ status: 'PAID', credits: 1 });
  });

  it('compares amounts exactly: "12.5" pays an order of "12.50"', async () => {
    const { onPaymentPaid } = creditOnPaymentPaid(book);
    const event = await paidOrder('12.50');
    await onPaymentPaid({ ...event, amount: '12.5' }, ctx());
    expect((await book.get(event.orderNo))?.credits).toBe(1);
  });

  it.each([
    ['a smaller amount', { amount: '12.49' }],
    ['another token', { tokenSymbol: 'USDC' }],
    ['another payment of the order', { paymentId: 'p_someone_else' }],
  ])('rejects for good %s, credits nothing, marks the order REJECTED', async (_, change) => {
    const { onPaymentPaid, tally } = creditOnPaymentPaid(book);
    const event = await paidOrder();
    await expect(onPaymentPaid({ ...event, ...change }, ctx())).rejects.toBeInstanceOf(PaymentRejectedError);
    expect(tally.rejected).toBe(1);
    expect(await book.get(event.orderNo)).toMatchObject({ status: 'REJECTED', credits: 0 });
  });

  it('rejects a payment for an unknown order', async () => {
    const { onPaymentPaid } = creditOnPaymentPaid(book);
    await expect(onPaymentPaid(samplePaymentPaidEvent(), ctx())).rejects.toBeInstanceOf(PaymentRejectedError);
  });

  it('rolls the credit back when the lease was lost before commit', async () => {
    const { onPaymentPaid } = creditOnPaymentPaid(book);
    const event = await paidOrder();
    await expect(onPaymentPaid(event, ctx(true))).rejects.toThrow('lease lost');
    expect(await book.get(event.orderNo)).toMatchObject({ status: 'PENDING', credits: 0 });
    await onPaymentPaid(event, ctx());
    expect((await book.get(event.orderNo))?.credits).toBe(1);
  });

  it('serialises concurrent credits of one payment on the embedded database', async () => {
    const { onPaymentPaid, tally } = creditOnPaymentPaid(book);
    const event = await paidOrder();
    await Promise.all(Array.from({ length: 10 }, () => onPaymentPaid(event, ctx())));
    expect(tally).toMatchObject({ credited: 1, caughtByDatabase: 9 });
  });
});
