// autocannon `setupRequest`, loaded by load-runner.mjs (plain CommonJS, no TypeScript loader there): every request
// carries a freshly signed delivery of a new payment, so the adapter measures first deliveries, not duplicates.
const { signWebhook } = require('@service-pay/core');
const { threadId } = require('node:worker_threads');

const SECRET = 'whsec_bench_adapters_0123456789abcdef';
let n = 0;

function signedDelivery() {
  n += 1;
  const id = `${threadId.toString(36)}x${process.pid.toString(36)}x${n.toString(36).padStart(8, '0')}`;
  return signWebhook({
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
}

const presigned = [];

module.exports = function setupRequest(request) {
  const { body, headers } = presigned.pop() ?? signedDelivery();
  return { ...request, method: 'POST', headers, body };
};
/**
 * Signs `count` deliveries ahead of the measured run. Signing on the fly made the load generator the
 * bottleneck (a route that does nothing got no more requests/s than the verifying ones), which squeezes
 * every ratio towards 1: the server under test must be what limits the rate.
 */
module.exports.presign = (count) => {
  for (let i = 0; i < count; i++) presigned.push(signedDelivery());
};
module.exports.SECRET = SECRET;
