// autocannon `setupRequest`, loaded by load-runner.mjs (plain CommonJS, no TypeScript loader there): every request
// carries a freshly signed delivery of a new payment, so the adapter measures first deliveries, not duplicates.
const { threadId } = require('node:worker_threads');
const { SECRET, signedBenchEvent } = require('./bench-event.cjs');

// Ids scoped by thread and process: every worker of every run sends payments no other has sent.
const scope = `${threadId.toString(36)}x${process.pid.toString(36)}x`;
let n = 0;

function signedDelivery() {
  n += 1;
  return signedBenchEvent(n, scope);
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
