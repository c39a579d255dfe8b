// Signed deliveries for the icount scripts: made before any measured loop, the same whatever K is.
import { signWebhook } from '@service-pay/core';

export const SECRET = 'whsec_bench_0123456789abcdef0123456789abcdef';

/**
 * `count` signed deliveries of distinct payments (about 330 bytes of JSON each), bodies as Buffers. With
 * `eventType`, the same payload under another event type: authentic, verified, then acknowledged unhandled.
 */
export function deliveries(count, eventType = 'payment.paid') {
  return Array.from({ length: count }, (_, i) => {
    const id = `${i.toString(36).padStart(8, '0')}${'k'.repeat(12)}`;
    const event = {
      event: eventType,
      paymentId: `p_${id}`,
      orderNo: `ORD-2026-${String(i).padStart(8, '0')}`,
      txId: `0x${'ab12'.repeat(16)}`,
      tokenSymbol: 'USDT',
      paymentNetwork: 'TRON',
      amount: '125.50',
      amountRaw: '125500000',
      blockNum: '61234567',
      confirmations: 20,
      paidAt: '2026-11-21T10:00:00.123Z',
    };
    const { body, headers } = signWebhook({ event, secret: SECRET, deliveryId: `dl_bench${i}` });
    return { body: Buffer.from(body), headers };
  });
}
