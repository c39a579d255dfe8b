// Every operation `pnpm bench:icount` counts: which script runs it, and whether CI holds it to a budget
// (bench/icount/baseline.json). Every budgeted operation is counted on every supported Node line, against
// that line's own baseline: a line the merchants run is a line whose speed can slide. The others are
// references (what a hand-rolled receiver costs), counted for the ratios and free to move with Node.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { countPerOperation } from './count.mjs';

const here = dirname(fileURLToPath(import.meta.url));

export const OPERATIONS = {
  verify: {
    script: 'memory-path.mjs',
    budget: true,
    what: '`verifyWebhook` (standalone), one valid delivery',
  },
  'verify-inline': {
    script: 'memory-path.mjs',
    budget: true,
    what: '`verifyWebhook` with `{ secret }` written inline (a fresh object per call)',
  },
  'verify-rotating': {
    script: 'memory-path.mjs',
    budget: true,
    what: '`verifyWebhook` with `{ secret: [new, old] }` inline, the old secret signing',
  },
  'handler-verify': {
    script: 'memory-path.mjs',
    budget: false,
    what: 'the handler up to verification (an authentic event of another type, 200)',
  },
  handler: {
    script: 'memory-path.mjs',
    budget: true,
    what: 'handler + `MemoryDedupeStore`, fresh payment',
  },
  'handler-duplicate': { script: 'memory-path.mjs', budget: true, what: 'the same, duplicate' },
  'fetch-handler': { script: 'fetch-handler.mjs', budget: true, what: '`createFetchHandler` + memory store, fresh' },
  redis: { script: 'redis-store.mjs', budget: true, what: 'handler + `RedisDedupeStore` (in-process client), fresh' },
  'redis-duplicate': { script: 'redis-store.mjs', budget: true, what: 'the same, duplicate' },
  check: { script: 'memory-path.mjs', budget: false, what: 'hand-rolled check (HMAC, compare, window, JSON.parse)' },
  'check-rotating': {
    script: 'memory-path.mjs',
    budget: false,
    what: 'hand-rolled check with two secrets, the second signing',
  },
  'check-map': { script: 'memory-path.mjs', budget: false, what: 'hand-rolled check + `Map`, fresh' },
  'check-map-duplicate': { script: 'memory-path.mjs', budget: false, what: 'hand-rolled check + `Map`, duplicate' },
  stripe: { script: 'stripe.mjs', budget: false, what: "stripe-node's `webhooks.constructEvent`" },
};

/** Instructions of one `name` operation at this N (the scripts size their pools from N). */
export function countOperation(name, n) {
  return countPerOperation(join(here, OPERATIONS[name].script), [name], n);
}

/**
 * `countOperation` of every name, `concurrency` counts at a time (each is one single-threaded process), in
 * the names' order; `onCount(name, count, seconds)` as each lands.
 */
export async function countOperations(names, n, { concurrency = 2, onCount = () => {} } = {}) {
  const counts = new Map();
  let next = 0;
  async function worker() {
    while (next < names.length) {
      const name = names[next++];
      const started = Date.now();
      counts.set(name, await countOperation(name, n));
      onCount(name, counts.get(name), (Date.now() - started) / 1000);
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, names.length) }, worker));
  return new Map(names.map((name) => [name, counts.get(name)]));
}
