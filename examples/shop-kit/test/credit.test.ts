import { PaymentRejectedError } from '@service-pay/core';
import { samplePaymentPaidEvent } from '@service-pay/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CreditContext, creditOnPaymentPaid, type Database, OrderBook, openDatabase } from '../src/index.ts';

let db: Database;
let book: OrderBook;
beforeAll(async () => {
  db = openDatabase();
  book = await OrderBook.open(db);
});
afterAll(() => db.close());

const ctx = (aborted = false): CreditContext => {
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
    outsideTransaction: (fn) => fn(),
  };
};

async function paidOrder(amount = '12.50', tokenSymbol = 'USDT') {
  const event = samplePaymentPaidEvent({ amount, tokenSymbol });
  await book.create({ id: event.orderNo, amount, tokenSymbol });
  await book.attachPayment(event.orderNo, event.paymentId);
  return event;
}

describe('the shop credit with a lease store (its own transaction, the unique paymentId as guard)', () => {
  it('credits once; the database catches a second credit of the same payment', async () => {
    const { onPaymentPaid, tally } = creditOnPaymentPaid(book, db);
    const event = await paidOrder();
    await onPaymentPaid(event, ctx());
    await onPaymentPaid(event, ctx());
    expect(tally).toMatchObject({ credited: 1, caughtByDatabase: 1 });
    expect(await book.get(event.orderNo)).toMatchObject({ status: 'PAID', credits: 1, creditedBy: 'webhook' });
  });

  it('compares amounts exactly: "12.5" pays an order of "12.50"', async () => {
    const { onPaymentPaid } = creditOnPaymentPaid(book, db);
    const event = await paidOrder('12.50');
    await onPaymentPaid({ ...event, amount: '12.5' }, ctx());
    expect((await book.get(event.orderNo))?.credits).toBe(1);
  });

  it.each([
    ['a smaller amount', { amount: '12.49' }],
    ['another token', { tokenSymbol: 'USDC' }],
    ['another payment of the order', { paymentId: 'p_someone_else' }],
  ])('rejects for good %s, credits nothing, marks the order REJECTED', async (_, change) => {
    const { onPaymentPaid, tally } = creditOnPaymentPaid(book, db);
    const event = await paidOrder();
    await expect(onPaymentPaid({ ...event, ...change }, ctx())).rejects.toBeInstanceOf(PaymentRejectedError);
    expect(tally.rejected).toBe(1);
    expect(await book.get(event.orderNo)).toMatchObject({ status: 'REJECTED', credits: 0 });
  });

  it('rejects a payment for an unknown order', async () => {
    const { onPaymentPaid } = creditOnPaymentPaid(book, db);
    await expect(onPaymentPaid(samplePaymentPaidEvent(), ctx())).rejects.toBeInstanceOf(PaymentRejectedError);
  });

  it('rolls the credit back when the lease was lost before commit', async () => {
    const { onPaymentPaid } = creditOnPaymentPaid(book, db);
    const event = await paidOrder();
    await expect(onPaymentPaid(event, ctx(true))).rejects.toThrow('lease lost');
    expect(await book.get(event.orderNo)).toMatchObject({ status: 'PENDING', credits: 0 });
    await onPaymentPaid(event, ctx());
    expect((await book.get(event.orderNo))?.credits).toBe(1);
  });

  it('serialises concurrent credits of one payment on the embedded database', async () => {
    const { onPaymentPaid, tally } = creditOnPaymentPaid(book, db);
    const event = await paidOrder();
    await Promise.all(Array.from({ length: 10 }, () => onPaymentPaid(event, ctx())));
    expect(tally).toMatchObject({ credited: 1, caughtByDatabase: 9 });
  });

  it('records a reconciliation credit as such', async () => {
    const { onPaymentPaid } = creditOnPaymentPaid(book, db);
    const { paymentId, orderNo, tokenSymbol, amount } = await paidOrder();
    await onPaymentPaid({ paymentId, orderNo, tokenSymbol, amount }, { ...ctx(), source: 'reconciliation' });
    expect(await book.get(orderNo)).toMatchObject({ status: 'PAID', credits: 1, creditedBy: 'reconciliation' });
  });
});

describe('the shop credit inside a transactional store’s transaction (ctx.tx)', () => {
  it('writes through ctx.tx only: the credit commits or rolls back with that transaction', async () => {
    const { onPaymentPaid, tally } = creditOnPaymentPaid(book, db);
    const event = await paidOrder();
    await expect(
      db.transaction(async (tx) => {
        await onPaymentPaid(event, { ...ctx(), tx });
        throw new Error('the store rolled back (a failed commit, say)');
      }),
    ).rejects.toThrow('rolled back');
    expect(await book.get(event.orderNo)).toMatchObject({ status: 'PENDING', credits: 0 });
    await db.transaction((tx) => onPaymentPaid(event, { ...ctx(), tx }));
    expect(await book.get(event.orderNo)).toMatchObject({ status: 'PAID', credits: 1 });
    expect(tally.credited).toBe(2);
  });

  it('does not guard on its own: the store’s inbox is the guard, so a second insert fails loudly', async () => {
    const { onPaymentPaid } = creditOnPaymentPaid(book, db);
    const event = await paidOrder();
    await db.transaction((tx) => onPaymentPaid(event, { ...ctx(), tx }));
    await expect(db.transaction((tx) => onPaymentPaid(event, { ...ctx(), tx }))).rejects.toThrow(/duplicate key/);
    expect((await book.get(event.orderNo))?.credits).toBe(1);
  });

  it('rejects without writing: the store commits the rejection, not the handler', async () => {
    const { onPaymentPaid, tally } = creditOnPaymentPaid(book, db);
    const event = await paidOrder('5.00');
    await expect(
      db.transaction((tx) => onPaymentPaid({ ...event, amount: '4.99' }, { ...ctx(), tx })),
    ).rejects.toBeInstanceOf(PaymentRejectedError);
    expect(tally.rejected).toBe(1);
    expect(await book.get(event.orderNo)).toMatchObject({ status: 'PENDING', credits: 0 });
  });
});
