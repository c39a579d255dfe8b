import { type PaymentPaidEvent, signWebhook } from '@service-pay/core';

export const SECRET = 'whsec_bench_0123456789abcdef0123456789abcdef';

let n = 0;
/** A realistic payment.paid event (about 330 bytes of JSON) with a unique payment id. */
export function benchEvent(): PaymentPaidEvent {
  n++;
  const id = `${n.toString(36).padStart(8, '0')}${'k'.repeat(12)}`;
  return {
    event: 'payment.paid',
    paymentId: `p_${id}`,
    orderNo: `ORD-2026-${String(n).padStart(8, '0')}`,
    txId: `0x${'ab12'.repeat(16)}`,
    tokenSymbol: 'USDT',
    paymentNetwork: 'TRON',
    amount: '125.50',
    amountRaw: '125500000',
    blockNum: '61234567',
    confirmations: 20,
    paidAt: '2026-11-21T10:00:00.123Z',
  };
}

export interface SignedDelivery {
  body: Buffer;
  text: string;
  headers: Record<string, string>;
}

/** `count` signed deliveries of distinct payments, bodies as Buffers the way Node servers receive them. */
export function signedDeliveries(count: number): SignedDelivery[] {
  return Array.from({ length: count }, () => {
    const { body, headers } = signWebhook({ event: benchEvent(), secret: SECRET });
    return { body: Buffer.from(body), text: body, headers };
  });
}
