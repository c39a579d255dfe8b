import { dedupeStoreConformance } from '@service-pay/core/testing';
import { type Redis, ReplyError } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failFastRedisOptions, RedisDedupeStore } from '../src/index.js';
import { connected, redis5On, redisOn, SHARED_REDIS, uniquePrefix } from './support/deliveries.js';

const PORT = SHARED_REDIS;
let client: Redis;
let plain: Redis;
let v5: Redis;
/** A stand-in for Redis before 7.0, which refuses `SET ... NX ... GET` with a syntax error; counts those. */
let before7: Redis;
let refusedSetNxGet = 0;
/** A stand-in for Redis before 6.2, which knows no `SET ... GET` at all; counts the refusals. */
let before62: Redis;
let refusedSetGet = 0;

/** A client that answers the SET commands `refuse` picks with Redis's "ERR syntax error" (nothing run). */
async function olderServer(refuse: (args: string[]) => boolean, count: () => void): Promise<Redis> {
  const older = await connected(redisOn(PORT, failFastRedisOptions()));
  const send = older.sendCommand.bind(older);
  older.sendCommand = ((command: { name: string; args: unknown[]; reject: (e: Error) => void; promise: unknown }) => {
    if (command.name === 'set' && refuse(command.args.map((a) => String(a).toUpperCase()))) {
      count();
      command.reject(new ReplyError('ERR syntax error'));
      return command.promise;
    }
    return (send as (c: unknown) => unknown)(command);
  }) as Redis['sendCommand'];
  return older;
}

beforeAll(async () => {
  client = await connected(redisOn(PORT, failFastRedisOptions()));
  // Default ioredis options: the store must hold the same contract on a client nobody tuned.
  plain = await connected(redisOn(PORT));
  v5 = await connected(redis5On(PORT, failFastRedisOptions()));
  // Only Redis 7 is installed here: this client answers NX together with GET the way Redis 6.2 does
  // ("ERR syntax error", nothing run) and passes everything else to the real server.
  before7 = await olderServer(
    (args) => args.includes('NX') && args.includes('GET'),
    () => refusedSetNxGet++,
  );
  before62 = await olderServer(
    (args) => args.includes('GET'),
    () => refusedSetGet++,
  );
});

afterAll(async () => {
  await Promise.all([client?.quit(), plain?.quit(), v5?.quit(), before7?.quit(), before62?.quit()]);
});

describe('RedisDedupeStore conformance on one Redis (fail-fast client)', () => {
  for (const c of dedupeStoreConformance(() => new RedisDedupeStore({ client, keyPrefix: uniquePrefix('conf') }))) {
    it(c.name, c.run);
  }
});

describe('RedisDedupeStore conformance on one Redis (default ioredis options)', () => {
  for (const c of dedupeStoreConformance(
    () => new RedisDedupeStore({ client: plain, keyPrefix: uniquePrefix('conf-plain') }),
  )) {
    it(c.name, c.run);
  }
});

describe('RedisDedupeStore conformance on a server before 6.2 (no SET ... GET: the Lua claim and completion)', () => {
  for (const c of dedupeStoreConformance(
    () => new RedisDedupeStore({ client: before62, keyPrefix: uniquePrefix('conf-before62') }),
  )) {
    it(c.name, c.run);
  }
  it('learns from one refusal each (first claim, first completion), then stays on the scripts', async () => {
    const store = new RedisDedupeStore({ client: before62, keyPrefix: uniquePrefix('before62') });
    const before = refusedSetGet;
    for (const key of ['a', 'b', 'c']) {
      expect(await store.claim(key, 't', 'fp', 10_000)).toEqual({ state: 'claimed' });
      expect(await store.complete(key, 't', 10_000, 'fp')).toBe(true);
    }
    expect(refusedSetGet - before).toBe(2);
  });
});

describe('RedisDedupeStore conformance on one Redis (ioredis 5, fail-fast client)', () => {
  for (const c of dedupeStoreConformance(
    () => new RedisDedupeStore({ client: v5, keyPrefix: uniquePrefix('conf-v5') }),
  )) {
    it(c.name, c.run);
  }
});

describe('RedisDedupeStore conformance on a server before Redis 7 (the Lua claim)', () => {
  for (const c of dedupeStoreConformance(
    () => new RedisDedupeStore({ client: before7, keyPrefix: uniquePrefix('conf-before7') }),
  )) {
    it(c.name, c.run);
  }
});

describe('RedisDedupeStore on one Redis', () => {
  it('keeps the lease and the completed record as server-side TTLs under keyPrefix + key', async () => {
    const keyPrefix = uniquePrefix('ttl');
    const store = new RedisDedupeStore({ client, keyPrefix });
    await store.claim('payment.paid:p_1', 'tok', 'fp', 30_000);
    const leaseTtl = await client.pttl(`${keyPrefix}payment.paid:p_1`);
    expect(leaseTtl).toBeGreaterThan(25_000);
    expect(leaseTtl).toBeLessThanOrEqual(30_000);

    await store.complete('payment.paid:p_1', 'tok', 7 * 24 * 3600_000, 'fp');
    const retainTtl = await client.pttl(`${keyPrefix}payment.paid:p_1`);
    expect(retainTtl).toBeGreaterThan(7 * 24 * 3600_000 - 60_000);
    // A completed record keeps the fingerprint, and the token that completed it (an idempotent retry).
    expect(await client.get(`${keyPrefix}payment.paid:p_1`)).toBe('C3:tokfp');
  });

  it('reports retryAfterMs from the lease time Redis has left', async () => {
    const store = new RedisDedupeStore({ client, keyPrefix: uniquePrefix('pttl') });
    await store.claim('k', 't1', 'fp', 20_000);
    const outcome = await store.claim('k', 't2', 'fp', 20_000);
    expect(outcome.state).toBe('in-progress');
    const { retryAfterMs } = outcome as { retryAfterMs: number };
    expect(retryAfterMs).toBeGreaterThan(15_000);
    expect(retryAfterMs).toBeLessThanOrEqual(20_000);
  });

  it('fences tokens exactly, even when one token is a prefix of another or holds the separator', async () => {
    const store = new RedisDedupeStore({ client, keyPrefix: uniquePrefix('fence') });
    await store.claim('k', 'ab:c', 'fp:with:colons', 10_000);
    const stales = ['ab', 'ab:', 'ab:cfp', 'ab:c:', 'b:c', ''];
    for (const stale of stales) {
      expect(await store.extend('k', stale, 10_000)).toBe(false);
      expect(await store.release('k', stale)).toBe(false);
    }
    // complete records the key whatever it finds (v3), so each stale token gets a key of its own.
    for (const [i, stale] of stales.entries()) {
      await store.claim(`k${i}`, 'ab:c', 'fp', 10_000);
      expect(await store.complete(`k${i}`, stale, 10_000, 'fp')).toBe(false);
      expect(await store.extend(`k${i}`, 'ab:c', 10_000)).toBe(false);
    }
    expect(await store.claim('k', 'x', 'fp:with:colons', 10_000)).toEqual({
      state: 'in-progress',
      fingerprint: 'fp:with:colons',
      retryAfterMs: expect.any(Number),
    });
    expect(await store.complete('k', 'ab:c', 10_000, 'fp:with:colons')).toBe(true);
    expect(await store.claim('k', 'y', 'other', 10_000)).toEqual({ state: 'completed', fingerprint: 'fp:with:colons' });
  });

  it('keeps unicode tokens and fingerprints intact', async () => {
    const store = new RedisDedupeStore({ client, keyPrefix: uniquePrefix('utf8') });
    await store.claim('k', 'tøken-ü', 'fp-é€', 10_000);
    expect((await store.claim('k', 'other', 'x', 10_000)) as { fingerprint: string }).toMatchObject({
      fingerprint: 'fp-é€',
    });
    expect(await store.complete('k', 'tøken-ü', 10_000, 'fp')).toBe(true);
  });

  it('accepts fractional milliseconds (rounded up for PX)', async () => {
    const store = new RedisDedupeStore({ client, keyPrefix: uniquePrefix('frac') });
    expect(await store.claim('k', 't', 'fp', 1500.4)).toEqual({ state: 'claimed' });
    expect(await store.extend('k', 't', 0.2)).toBe(true);
  });

  it('refuses to read a key it did not write instead of guessing (rejects: 503, never a credit)', async () => {
    const keyPrefix = uniquePrefix('foreign');
    const store = new RedisDedupeStore({ client, keyPrefix });
    await client.set(`${keyPrefix}k`, 'something else', 'PX', 10_000);
    await expect(store.claim('k', 't', 'fp', 10_000)).rejects.toThrow(/did not write/);
    await client.del(`${keyPrefix}k`);
    await client.hset(`${keyPrefix}k`, 'a', 'b');
    await expect(store.claim('k', 't', 'fp', 10_000)).rejects.toThrow(/WRONGTYPE/);
    await client.del(`${keyPrefix}k`);
  });

  it('defines its scripts on a client once, however many stores share it', async () => {
    const shared = await connected(redisOn(PORT, failFastRedisOptions()));
    try {
      let defined = 0;
      const original = shared.defineCommand.bind(shared);
      shared.defineCommand = (...args: Parameters<Redis['defineCommand']>) => {
        defined++;
        return original(...args);
      };
      const a = new RedisDedupeStore({ client: shared, keyPrefix: uniquePrefix('a') });
      const b = new RedisDedupeStore({ client: shared, keyPrefix: uniquePrefix('b') });
      // Defined on first use (no script is on the path of a fresh or duplicate delivery), once per client.
      for (const store of [a, b]) {
        expect(await store.claim('k', 't', 'fp', 10_000)).toEqual({ state: 'claimed' });
        expect(await store.extend('k', 't', 10_000)).toBe(true);
        expect(await store.release('k', 't')).toBe(true);
      }
      expect(defined).toBe(2);
    } finally {
      await shared.quit();
    }
  });

  it('falls back to the Lua claim once when the server refuses SET NX GET (Redis < 7), and stays on it', async () => {
    const keyPrefix = uniquePrefix('before7');
    const store = new RedisDedupeStore({ client: before7, keyPrefix });
    const refusedBefore = refusedSetNxGet;
    expect(await store.claim('k', 't1', 'fp', 10_000)).toEqual({ state: 'claimed' });
    expect(await store.claim('k', 't2', 'fp', 10_000)).toMatchObject({ state: 'in-progress', fingerprint: 'fp' });
    expect(await store.complete('k', 't1', 10_000, 'fp')).toBe(true);
    expect(await store.claim('k', 't3', 'fp', 10_000)).toEqual({ state: 'completed', fingerprint: 'fp' });
    expect(refusedSetNxGet - refusedBefore).toBe(1);
    // Both claims write the same value: complete, release and extend cannot tell which one wrote it.
    await store.claim('k2', 'tøk', 'fp-é', 10_000);
    const viaScript = await client.get(`${keyPrefix}k2`);
    await new RedisDedupeStore({ client, keyPrefix }).claim('k3', 'tøk', 'fp-é', 10_000);
    expect(await client.get(`${keyPrefix}k3`)).toBe(viaScript);
  });

  it('checks its options when constructed', () => {
    expect(() => new RedisDedupeStore({ client: {} as Redis })).toThrow(/ioredis Redis or Cluster/);
    // One owner for the wait: the handler's storeTimeoutMs. The store's old option says where it went.
    expect(() => new RedisDedupeStore({ client, commandTimeoutMs: 800 } as never)).toThrow(/storeTimeoutMs/);
    expect(() => new RedisDedupeStore({ client, keyPrefix: 1 as unknown as string })).toThrow(/keyPrefix/);
  });
});
