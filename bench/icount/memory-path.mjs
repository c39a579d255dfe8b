// One operation of the memory path, for `../shared/tools/icount` (instructions per operation under
// valgrind; see bench/README.md). Run as `node bench/icount/memory-path.mjs <contestant> <N> <K>` (bench-kit's icount.mjs).
//
// Plain JavaScript on the built packages: a TypeScript loader would add its own instructions to the
// start-up that icount subtracts anyway, but also to the stack of every call it wraps.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { BENCH_TOLERANCE_SEC, deliveries, runContestant, SECRET } from '@service-pay/bench-kit/icount';
import { createWebhookHandler, MemoryDedupeStore, verifyWebhook } from '@service-pay/core';

export const CONTESTANTS = {
  /** The least a careful receiver does: HMAC, constant-time compare, window, JSON.parse. */
  check: { fresh: true, make: (size) => ({ pool: deliveries(size), op: handRolledCheck }) },
  /** The bare check during a rotation: the new secret's HMAC compared first, then the old one's (which signed). */
  'check-rotating': { fresh: true, make: (size) => ({ pool: deliveries(size), op: handRolledRotating }) },
  /** The bare check plus a Map of payment ids seen: the least dedupe there is. */
  'check-map': { fresh: true, make: (size) => ({ pool: deliveries(size), op: checkWithMap() }) },
  'check-map-duplicate': { fresh: false, make: (size) => ({ pool: deliveries(size), op: checkWithMap() }) },
  /** `verifyWebhook`, the standalone API, with one options object for every call (as an app holds it). */
  verify: {
    fresh: true,
    make: (size) => {
      const options = { secret: SECRET };
      return { pool: deliveries(size), op: (d) => verifyWebhook({ rawBody: d.body, headers: d.headers }, options) };
    },
  },
  /** `verifyWebhook` with its options written inline, as the README shows: a fresh object on every call. */
  'verify-inline': {
    fresh: true,
    make: (size) => ({
      pool: deliveries(size),
      op: (d) => verifyWebhook({ rawBody: d.body, headers: d.headers }, { secret: SECRET }),
    }),
  },
  /** `verifyWebhook` during a key rotation: the new secret first, the old one (which signed) second, inline. */
  'verify-rotating': {
    fresh: true,
    make: (size) => ({
      pool: deliveries(size),
      op: (d) => verifyWebhook({ rawBody: d.body, headers: d.headers }, { secret: [NEW_SECRET, SECRET] }),
    }),
  },
  /**
   * Verification as the handler runs it (options resolved once, body received, signature, window, JSON,
   * headers), and nothing after it: an authentic event of another type is acknowledged (200) unhandled.
   */
  'handler-verify': {
    fresh: true,
    make: (size) => ({ pool: deliveries(size, 'payment.created'), op: handlerWithMemoryStore(size) }),
  },
  /** createWebhookHandler with the memory store, every delivery a new payment. */
  handler: { fresh: true, make: (size) => ({ pool: deliveries(size), op: handlerWithMemoryStore(size) }) },
  /** The same handler, the same delivery again: answered duplicate. */
  'handler-duplicate': { fresh: false, make: (size) => ({ pool: deliveries(size), op: handlerWithMemoryStore(size) }) },
};

/** A second secret, as a rotation holds beside the one that signs. */
const NEW_SECRET = 'whsec_bench_rotated_in_0123456789abcdef';

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

function handRolledRotating(d) {
  const header = d.headers['x-service-signature'];
  const comma = header.indexOf(',');
  const t = header.slice(2, comma);
  const received = Buffer.from(header.slice(comma + 4), 'hex');
  const signedWith = (secret) => {
    const expected = createHmac('sha256', secret).update(`${t}.`).update(d.body).digest();
    return received.length === expected.length && timingSafeEqual(received, expected);
  };
  if (!signedWith(NEW_SECRET) && !signedWith(SECRET)) throw new Error('bad signature');
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

function handlerWithMemoryStore(size) {
  const handle = createWebhookHandler({
    secret: SECRET,
    toleranceSec: BENCH_TOLERANCE_SEC,
    store: new MemoryDedupeStore({ maxEntries: size + 1 }),
    onPaymentPaid: () => {},
  });
  return (d) => handle({ method: 'POST', headers: d.headers, rawBody: d.body });
}

if (import.meta.url === `file://${process.argv[1]}`) await runContestant(CONTESTANTS, 'memory-path.mjs');
