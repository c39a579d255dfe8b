import { type DedupeStore, MemoryDedupeStore } from '@service-pay/core';
import { failFastRedisOptions, RedisDedupeStore } from '@service-pay/redis';
import { Redis } from 'ioredis';

/** A dedupe store and how to close what it holds open. */
export interface DedupeStoreHandle {
  store: DedupeStore;
  close: () => Promise<void>;
}

/**
 * The Redis store when `REDIS_URL` is set (several instances share it), else the in-memory store (one
 * instance). The Redis client is built fail-fast, so an outage answers 503 at once instead of queueing.
 */
export function createDedupeStore(redisUrl: string | undefined, keyPrefix = 'shop:'): DedupeStoreHandle {
  if (redisUrl === undefined) return { store: new MemoryDedupeStore(), close: async () => {} };
  const client = new Redis(redisUrl, failFastRedisOptions());
  // Outages are answered with 503 by the pipeline; the client's own error events would only be noise.
  client.on('error', () => {});
  return {
    store: new RedisDedupeStore({ client, keyPrefix }),
    close: async () => {
      client.disconnect();
    },
  };
}
