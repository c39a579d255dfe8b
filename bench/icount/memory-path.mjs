// One operation of the memory path, for `../shared/tools/icount` (instructions per operation under
// valgrind; see bench/README.md). Run as `node bench/icount/memory-path.mjs <contestant> <K>`: it does the
// contestant's operation K times. Everything that is not the operation (signing, building requests, the
// first delivery of the duplicate rows) happens before the loop and does not grow with K, so icount's
// difference of two runs (K = N and K = 2N) cancels it out.
//
// Plain JavaScript on the built packages: a TypeScript loader would add its own instructions to the
// start-up that icount subtracts anyway, but also to the stack of every call it wraps.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createWebhookHandler, MemoryDedupeStore, signWebhook } from '@service-pay/core';

const SECRET = 'whsec_bench_0123456789abcdef0123456789abcdef';
/** Fresh rows walk this many distinct deliveries: enough for icount's default 2N = 40,000 operations. */
export const POOL_SIZE = 40_000;

export const CONTESTANTS = {
  /** The least a careful receiver does: HMAC, constant-time compare, window, JSON.parse. */
  check: { fresh: true, make: () => (d) => handRolledCheck(d) },
  /** The bare check plus a Map of payment ids seen: the least dedupe there is. */
  'check-map': { fresh: true, make: () => checkWithMap() },
  'check-map-duplicate': { fresh: false, make: () => checkWithMap() },
  /** createWebhookHandler with the memory store, every delivery a new payment. */
  handler: { fresh: true, make: () => handlerWithMemoryStore() },
  /** The same handler, the same delivery again: answered duplicate. */
  'handler-duplicate': { fresh: false, make: () => handlerWithMemoryStore() },
};

function handRolledCheck(d) {
  const header = d.headers['x-service-signature'];
  const comma = header.indexOf(',');
  const t = header.slice(2, comma);
  const received = Buffer.from(header.slice(comma + 4), 'hex');
  const expected = createHmac('sha256', SECRET).update(`${t}.`).update(d.body).digest();
  if (received.length !== expected.length || !timingSafeEqual(received, expected)) throw new Error('bad signature');
  if (Math.abs(Date.now() / 1000 - Number(t)) > 300) throw new Error('stale');
  return JSON.parse(d.body.toString('utf8'));
}

function checkWithMap() {
  const seen = new Map();
  return (d) => {
    const event = handRolledCheck(d);
    if (seen.has(event.paymentId)) return 'duplicate';
    seen.set(event.paymentId, true);
    return 'credited';
  };
}

function handlerWithMemoryStore() {
  const handle = createWebhookHandler({
    secret: SECRET,
    store: new MemoryDedupeStore({ maxEntries: POOL_SIZE * 2 }),
    onPaymentPaid: () => {},
  });
  return (d) => handle({ method: 'POST', headers: d.headers, rawBody: d.body });
}

/** `count` signed deliveries of distinct payments (about 330 bytes of JSON each), bodies as Buffers. */
export function deliveries(count) {
  return Array.from({ length: count }, (_, i) => {
    const id = `${i.toString(36).padStart(8, '0')}${'k'.repeat(12)}`;
    const event = {
      event: 'payment.paid',
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
    const { body, headers } = signWebhook({ event, secret: SECRET });
    return { body: Buffer.from(body), headers };
  });
}

async function main() {
  const [name, k] = process.argv.slice(2);
  const contestant = CONTESTANTS[name];
  const times = Number(k);
  if (contestant === undefined || !Number.isInteger(times) || times < 1) {
    console.error(`usage: node memory-path.mjs <${Object.keys(CONTESTANTS).join('|')}> <K>`);
    process.exit(2);
  }
  if (contestant.fresh && times > POOL_SIZE) {
    console.error(`memory-path: K=${times} is more than the ${POOL_SIZE} fresh deliveries prepared`);
    process.exit(2);
  }
  // The same pool whatever K is, so its cost cancels out of icount's difference.
  const pool = deliveries(POOL_SIZE);
  const op = contestant.make();
  const one = pool[0];
  // Every contestant gets one untimed call first; for the duplicate rows it records the payment.
  await op(contestant.fresh ? pool[POOL_SIZE - 1] : one);
  for (let i = 0; i < times; i++) {
    const answer = await op(contestant.fresh ? pool[i] : one);
    if (answer?.status !== undefined && answer.status !== 200) throw new Error(`answered ${answer.status}`);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
