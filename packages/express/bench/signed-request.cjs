// autocannon `setupRequest`, loaded by load-runner.mjs (plain CommonJS, no TypeScript loader there): every request
// carries a freshly signed delivery of a new payment, so the adapter measures first deliveries, not duplicates.
const { signWebhook } = require('@service-pay/core');
const { threadId } = require('node:worker_threads');

const SECRET = 'whsec_bench_adapters_0123456789abcdef';
let n = 0;

module.exports = function setupRequest(request) {
  n += 1;
  const id = `${threadId.toString(36)}x${process.pid.toString(36)}x${n.toString(36).padStart(8, '0')}`;
  const { body, headers } = signWebhook({
    secret: SECRET,
    event: {
      event: 'payment.paid',
      paymentId: `p_${id}`,
      orderNo: `ORD-${id}`,
      txId: `0x${'ab12'.repeat(16)}`,
      tokenSymbol: 'USDT',
      paymentNetwork: 'TRON',
      amount: '125.50',
      amountRaw: '125500000',
      blockNum: '61234567',
      confirmations: 20,
      paidAt: '2026-11-21T10:00:00.123Z',
    },
  });
  return { ...request, method: 'POST', headers, body };
};
module.exports.SECRET = SECRET;
