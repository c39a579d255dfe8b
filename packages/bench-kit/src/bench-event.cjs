// The one signed delivery every benchmark sends: the icount scripts (bench-kit's icount.mjs), the timed
// suites (fixtures.ts) and the adapter load's autocannon workers (signed-request.cjs). Plain CommonJS so that
// all three load it as it is: ESM without a loader, TypeScript through tsx, and require() in a worker.
const { signWebhook } = require('@service-pay/core');

/** The secret the benchmarks sign with. */
const SECRET = 'whsec_bench_0123456789abcdef0123456789abcdef';

/**
 * A realistic `payment.paid` event (about 330 bytes of JSON): payment `n` of `scope` (a prefix that keeps ids
 * of different processes apart), optionally under another event type.
 */
function benchEvent(n, scope = '', eventType = 'payment.paid') {
  const id = `${scope}${n.toString(36).padStart(8, '0')}${'k'.repeat(12)}`;
  return {
    event: eventType,
    paymentId: `p_${id}`,
    orderNo: `ORD-2026-${scope}${String(n).padStart(8, '0')}`,
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

/** `benchEvent(n, scope, eventType)` signed with SECRET: `{ body, headers }` as `signWebhook` returns them. */
function signedBenchEvent(n, scope = '', eventType = 'payment.paid', deliveryId = undefined) {
  return signWebhook({ event: benchEvent(n, scope, eventType), secret: SECRET, deliveryId });
}

module.exports = { SECRET, benchEvent, signedBenchEvent };
