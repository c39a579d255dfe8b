// One delivery through `createWebhookHandler` with `RedisDedupeStore`, for `../shared/tools/icount`:
// `node bench/icount/redis-store.mjs <contestant> <N> <K>`. The client is a stand-in that answers the
// store's commands from a Map in this process, so what is counted is the client side only: the pipeline,
// the store, the store-call bound, and the promise a real client would settle. Not Redis, and not
// ioredis's command encoding (bench `pnpm bench redis` times those against a real server); this is the
// part of a delivery our code owns, with nothing else moving under it.

import { BENCH_TOLERANCE_SEC, deliveries, runContestant, SECRET } from '@service-pay/bench-kit/icount';
import { createWebhookHandler } from '@service-pay/core';
import { RedisDedupeStore } from '@service-pay/redis';

/** What the store sends on its usual paths (SET ... GET, with or without NX), answered as Redis 7 would. */
class InProcessRedis {
  #values = new Map();
  defineCommand() {}
  set(key, value, ...options) {
    const previous = this.#values.get(key) ?? null;
    if (!(options.includes('NX') && previous !== null)) this.#values.set(key, value);
    return Promise.resolve(options.includes('GET') ? previous : 'OK');
  }
  pttl() {
    return Promise.resolve(1_000);
  }
}

function handlerWithRedisStore() {
  const handle = createWebhookHandler({
    secret: SECRET,
    toleranceSec: BENCH_TOLERANCE_SEC,
    store: new RedisDedupeStore({ client: new InProcessRedis() }),
    onPaymentPaid: () => {},
  });
  return (d) => handle({ method: 'POST', headers: d.headers, rawBody: d.body });
}

export const CONTESTANTS = {
  /** A new payment: claim (SET NX PX GET), the handler, complete (SET PX GET), 200. */
  redis: { fresh: true, make: (size) => ({ pool: deliveries(size), op: handlerWithRedisStore() }) },
  /** The same payment again: one SET NX PX GET finds the completed record, 200 duplicate. */
  'redis-duplicate': { fresh: false, make: (size) => ({ pool: deliveries(size), op: handlerWithRedisStore() }) },
};

if (import.meta.url === `file://${process.argv[1]}`) await runContestant(CONTESTANTS, 'redis-store.mjs');
