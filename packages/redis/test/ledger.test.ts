import { ledgerConformance } from '@service-pay/core/testing';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { failFastRedisOptions, RedisDedupeStore } from '../src/index.js';
import { connected, redisOn, uniquePrefix } from './support/deliveries.js';

const PORT = Number(process.env.REDIS_PORT ?? 6379);

describe('the ledger on RedisDedupeStore (ioredis)', () => {
  let client: Redis;
  const keyPrefix = uniquePrefix('ledger');
  beforeAll(async () => {
    client = await connected(redisOn(PORT, failFastRedisOptions()));
  });
  afterAll(async () => {
    await client.del(`{${keyPrefix}ledger}:entries`, `{${keyPrefix}ledger}:open`);
    client.disconnect();
  });
  const cases = ledgerConformance({ make: async () => ({ store: new RedisDedupeStore({ client, keyPrefix }) }) });
  for (const c of cases) it(c.name, c.run);
});
