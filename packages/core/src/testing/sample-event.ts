import type { PaymentPaidEvent } from '../event/payment-paid-event.js';

let counter = 0;

/**
 * A valid `payment.paid` event with a fresh payment id, for tests. Override any field.
 *
 * @example
 * ```ts
 * const event = samplePaymentPaidEvent({ orderNo: 'order-42', amount: '12.50' });
 * const { body, headers } = signWebhook({ event, secret });
 * ```
 */
export function samplePaymentPaidEvent(overrides: Partial<PaymentPaidEvent> = {}): PaymentPaidEvent {
  counter += 1;
  const id = `${Date.now().toString(36)}${counter.toString(36)}${Math.random().toString(36).slice(2, 8)}`;
  return {
    event: 'payment.paid',
    paymentId: `p_${id}`,
    orderNo: `order_${id}`,
    txId: `0x${id.padEnd(64, '0').slice(0, 64)}`,
    tokenSymbol: 'USDT',
    paymentNetwork: 'TRON',
    amount: '12.50',
    amountRaw: '12500000',
    blockNum: '61234567',
    confirmations: 20,
    paidAt: '2026-11-21T10:00:00.000Z',
    ...overrides,
  };
}
