import type { DedupeStore } from '../dedupe-store.js';

/**
 * One case of the store conformance suite: a name and an async check that throws on failure.
 *
 * @example
 * ```ts
 * const cases: ConformanceCase[] = dedupeStoreConformance(() => new MemoryDedupeStore());
 * ```
 */
export interface ConformanceCase {
  name: string;
  run: () => Promise<void>;
}

/** What a store factory returns: the store and, when it needs it, a clean-up run after each case. */
export type StoreUnderTest = DedupeStore | { store: DedupeStore; cleanup?: () => Promise<void> };

/**
 * The behaviour every `DedupeStore` must have, as framework-neutral cases. The memory store, the Redis
 * store (single node and Cluster) and any store you write run the same list.
 *
 * `makeStore` is called once per case; keys are unique per case, so one backing database can serve all.
 *
 * @example
 * ```ts
 * import { describe, it } from 'vitest';
 * import { dedupeStoreConformance } from '@service-pay/core/testing';
 *
 * describe('MyStore', () => {
 *   for (const c of dedupeStoreConformance(() => new MyStore())) it(c.name, c.run);
 * });
 * ```
 */
export function dedupeStoreConformance(makeStore: () => StoreUnderTest | Promise<StoreUnderTest>): ConformanceCase[] {
  const run = (name: string, body: (store: DedupeStore, key: string) => Promise<void>): ConformanceCase => ({
    name,
    run: async () => {
      const made = await makeStore();
      const store = 'claim' in made ? made : made.store;
      const key = `conformance:${name.replace(/\W+/g, '-')}:${Math.random().toString(36).slice(2)}`;
      try {
        await body(store, key);
      } finally {
        if (!('claim' in made)) await made.cleanup?.();
      }
    },
  });

  return [
    run('a fresh key is claimed', async (store, key) => {
      equal(await store.claim(key, 't1', 'fp', 10_000), { state: 'claimed' });
    }),
    run('50 parallel claims of one key give exactly one claimed', async (store, key) => {
      const outcomes = await Promise.all(Array.from({ length: 50 }, (_, i) => store.claim(key, `t${i}`, 'fp', 10_000)));
      const claimed = outcomes.filter((o) => o.state === 'claimed').length;
      if (claimed !== 1) throw new Error(`expected exactly 1 claimed, got ${claimed}`);
      for (const o of outcomes) {
        if (o.state === 'in-progress') {
          equal(o.fingerprint, 'fp');
          if (!(o.retryAfterMs > 0 && o.retryAfterMs <= 10_000))
            throw new Error(`retryAfterMs out of range: ${o.retryAfterMs}`);
        } else if (o.state !== 'claimed') throw new Error(`unexpected ${o.state}`);
      }
    }),
    run('a held key answers in-progress with its fingerprint', async (store, key) => {
      await store.claim(key, 't1', 'fp-1', 10_000);
      const again = await store.claim(key, 't2', 'fp-2', 10_000);
      equal(again.state, 'in-progress');
      equal((again as { fingerprint: string }).fingerprint, 'fp-1');
    }),
    run('a completed key answers completed with its fingerprint', async (store, key) => {
      await store.claim(key, 't1', 'fp-1', 10_000);
      equal(await store.complete(key, 't1', 60_000), true);
      equal(await store.claim(key, 't2', 'fp-1', 10_000), { state: 'completed', fingerprint: 'fp-1' });
      equal(await store.claim(key, 't3', 'fp-other', 10_000), { state: 'completed', fingerprint: 'fp-1' });
    }),
    run('complete, release and extend with a stale token give false', async (store, key) => {
      await store.claim(key, 'owner', 'fp', 10_000);
      equal(await store.complete(key, 'stale', 60_000), false);
      equal(await store.release(key, 'stale'), false);
      equal(await store.extend(key, 'stale', 10_000), false);
      // ...and they changed nothing: the owner still holds the lease.
      equal((await store.claim(key, 'other', 'fp', 10_000)).state, 'in-progress');
      equal(await store.extend(key, 'owner', 10_000), true);
      equal(await store.complete(key, 'owner', 60_000), true);
    }),
    run('operations on an unknown key give false', async (store, key) => {
      equal(await store.complete(key, 't', 60_000), false);
      equal(await store.release(key, 't'), false);
      equal(await store.extend(key, 't', 10_000), false);
    }),
    run('a completed key cannot be released, extended or completed again by its old token', async (store, key) => {
      await store.claim(key, 't1', 'fp', 10_000);
      await store.complete(key, 't1', 60_000);
      equal(await store.release(key, 't1'), false);
      equal(await store.extend(key, 't1', 10_000), false);
      equal(await store.complete(key, 't1', 60_000), false);
      equal((await store.claim(key, 't2', 'fp', 10_000)).state, 'completed');
    }),
    run('a released key can be claimed again', async (store, key) => {
      await store.claim(key, 't1', 'fp', 10_000);
      equal(await store.release(key, 't1'), true);
      equal(await store.claim(key, 't2', 'fp', 10_000), { state: 'claimed' });
    }),
    run('an expired lease can be claimed again, and the old token is fenced off', async (store, key) => {
      await store.claim(key, 't1', 'fp', 60);
      await sleep(120);
      equal(await store.claim(key, 't2', 'fp', 10_000), { state: 'claimed' });
      equal(await store.complete(key, 't1', 60_000), false);
      equal(await store.extend(key, 't1', 10_000), false);
      equal(await store.release(key, 't1'), false);
      equal(await store.complete(key, 't2', 60_000), true);
    }),
    run('extend keeps a lease alive past its first end', async (store, key) => {
      await store.claim(key, 't1', 'fp', 150);
      await sleep(80);
      equal(await store.extend(key, 't1', 400), true);
      await sleep(120);
      equal((await store.claim(key, 't2', 'fp', 10_000)).state, 'in-progress');
    }),
    run('a completed key is forgotten after retainMs', async (store, key) => {
      await store.claim(key, 't1', 'fp', 10_000);
      await store.complete(key, 't1', 80);
      await sleep(150);
      equal(await store.claim(key, 't2', 'fp', 10_000), { state: 'claimed' });
    }),
    run('keys are independent', async (store, key) => {
      equal((await store.claim(`${key}:a`, 't', 'fp', 10_000)).state, 'claimed');
      equal((await store.claim(`${key}:b`, 't', 'fp', 10_000)).state, 'claimed');
    }),
  ];
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function equal(actual: unknown, expected: unknown): void {
  const a = JSON.stringify(actual);
  const e = JSON.stringify(expected);
  if (a !== e) throw new Error(`expected ${e}, got ${a}`);
}
