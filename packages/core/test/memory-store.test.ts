import { describe, expect, it } from 'vitest';
import { MemoryDedupeStore } from '../src/index.js';
import { tokenTag } from '../src/store/completed-record.js';
import { dedupeStoreConformance } from '../src/testing/index.js';
import { recordingLogger } from './support/recording-logger.js';

describe('MemoryDedupeStore: store conformance suite', () => {
  for (const c of dedupeStoreConformance(() => new MemoryDedupeStore())) it(c.name, c.run);
});

describe('MemoryDedupeStore: bounds and clock', () => {
  const clock = () => {
    let now = 1_000_000;
    return { now: () => now, advance: (ms: number) => (now += ms) };
  };

  it('expires a lease at leaseMs and a completed key at retainMs (injected clock)', async () => {
    const c = clock();
    const store = new MemoryDedupeStore({ now: c.now });
    await store.claim('k', 't1', 'fp', 1_000);
    c.advance(999);
    expect(await store.claim('k', 't2', 'fp', 1_000)).toEqual({
      state: 'in-progress',
      fingerprint: 'fp',
      retryAfterMs: 1,
    });
    c.advance(1);
    expect(await store.claim('k', 't2', 'fp', 1_000)).toEqual({ state: 'claimed' });
    expect(await store.complete('k', 't2', 5_000, 'fp')).toBe(true);
    c.advance(4_999);
    expect((await store.claim('k', 't3', 'fp', 1_000)).state).toBe('completed');
    c.advance(1);
    expect((await store.claim('k', 't3', 'fp', 1_000)).state).toBe('claimed');
  });

  it('keeps a completed key when the store is made while the clock reads 0 (Cloudflare Workers at module scope)', async () => {
    // Workers freeze the clock at 0 while a module's top level runs; an origin read there put every later
    // expiry past the packed record's 40 bits, and completed keys read as expired (duplicates credited).
    let now = 0;
    const store = new MemoryDedupeStore({ now: () => now });
    now = Date.UTC(2026, 10, 23);
    await store.claim('k', 't1', 'fp', 1_000);
    expect(await store.complete('k', 't1', 86_400_000, 'fp')).toBe(true);
    now += 86_399_999;
    expect((await store.claim('k', 't2', 'fp', 1_000)).state).toBe('completed');
    now += 1;
    expect((await store.claim('k', 't2', 'fp', 1_000)).state).toBe('claimed');
  });

  it('keeps a completed key whose retention outlasts the packed expiry (never wraps to the past)', async () => {
    const store = new MemoryDedupeStore();
    await store.claim('k', 't1', 'fp', 1_000);
    expect(await store.complete('k', 't1', 2 ** 41, 'fp')).toBe(true);
    expect((await store.claim('k', 't2', 'fp', 1_000)).state).toBe('completed');
  });

  it("tells a retried complete of its own from another attempt's, whatever the token's tag", async () => {
    const store = new MemoryDedupeStore();
    const tokens = Array.from({ length: 64 }, (_, i) => `prefix.${i.toString(36)}`);
    // Tags with the high bit set and without: the packed record must give back the same tag for both.
    expect(tokens.some((t) => tokenTag(t) < 0)).toBe(true);
    expect(tokens.some((t) => tokenTag(t) > 0)).toBe(true);
    for (const [i, token] of tokens.entries()) {
      await store.claim(`k${i}`, token, 'fp', 60_000);
      expect(await store.complete(`k${i}`, token, 60_000, 'fp')).toBe(true);
      expect(await store.complete(`k${i}`, token, 60_000, 'fp')).toBe(true);
      expect(await store.complete(`k${i}`, `${token}x`, 60_000, 'fp')).toBe(false);
    }
  });

  it('holds at most maxEntries, forgetting the oldest completed key first', async () => {
    const store = new MemoryDedupeStore({ maxEntries: 3, logger: recordingLogger() });
    for (const k of ['a', 'b', 'c']) {
      await store.claim(k, 't', 'fp', 60_000);
      await store.complete(k, 't', 60_000, 'fp');
    }
    await store.claim('d', 't', 'fp', 60_000);
    expect(store.size).toBe(3);
    expect((await store.claim('a', 't', 'fp', 60_000)).state).toBe('claimed'); // 'a' was evicted; now 'b' goes
    expect((await store.claim('b', 't', 'fp', 60_000)).state).toBe('claimed');
    expect(store.size).toBe(3);
  });

  it('never evicts a lease in progress; when only leases are left it refuses the claim', async () => {
    const store = new MemoryDedupeStore({ maxEntries: 3, logger: recordingLogger() });
    await store.claim('busy', 't', 'fp', 60_000);
    await store.claim('done', 't', 'fp', 60_000);
    await store.complete('done', 't', 60_000, 'fp');
    await store.claim('busy2', 't', 'fp', 60_000);
    await store.claim('new', 't', 'fp', 60_000); // evicts 'done', not 'busy'
    expect((await store.claim('busy', 'x', 'fp', 60_000)).state).toBe('in-progress');
    await expect(store.claim('one-more', 't', 'fp', 60_000)).rejects.toThrow(/full.*Raise maxEntries/);
  });

  it('sweeps expired keys as new ones arrive, so memory follows traffic', async () => {
    const c = clock();
    const store = new MemoryDedupeStore({ now: c.now });
    for (let i = 0; i < 100; i++) {
      await store.claim(`old${i}`, 't', 'fp', 1_000);
      await store.complete(`old${i}`, 't', 1_000, 'fp');
    }
    c.advance(10_000);
    for (let i = 0; i < 100; i++) await store.claim(`new${i}`, 't', 'fp', 60_000);
    expect(store.size).toBe(100);
  });

  it('steps over a live lease at the front while sweeping', async () => {
    const c = clock();
    const store = new MemoryDedupeStore({ now: c.now });
    await store.claim('long-running', 't', 'fp', 1_000_000);
    for (let i = 0; i < 5; i++) {
      await store.claim(`old${i}`, 't', 'fp', 1_000);
      await store.complete(`old${i}`, 't', 1_000, 'fp');
    }
    c.advance(10_000);
    await store.claim('trigger', 't', 'fp', 60_000);
    expect(store.size).toBe(2);
  });

  it('regression: never forgets an unexpired completed key silently; logs it, rate-limited, with its age', async () => {
    const c = clock();
    const logger = recordingLogger();
    const store = new MemoryDedupeStore({ maxEntries: 2, now: c.now, logger });
    for (const k of ['a', 'b']) {
      await store.claim(k, 't', 'fp', 60_000);
      await store.complete(k, 't', 3_600_000, 'fp');
    }
    c.advance(42_000);
    await store.claim('c', 't', 'fp', 60_000); // evicts 'a', 42 s old
    const [first] = logger.at('warn');
    expect(first?.fields).toMatchObject({ key: 'a', ageMs: 42_000, maxEntries: 2 });
    expect(first?.message).toMatch(/forgot a completed key 42 s old.*late duplicate.*Raise maxEntries/);
    // A flood of evictions is one line, then a count when the window closes.
    for (let i = 0; i < 50; i++) {
      await store.complete('c', 't', 3_600_000, 'fp');
      await store.claim(`k${i}`, 't', 'fp', 60_000);
      await store.complete(`k${i}`, 't', 3_600_000, 'fp');
    }
    expect(logger.at('warn')).toHaveLength(1);
    c.advance(10_001);
    await store.claim('after-window', 't', 'fp', 60_000);
    const lines = logger.at('warn');
    expect(lines.some((l) => /\d+ more completed keys were forgotten/.test(l.message))).toBe(true);
  });

  it('an expired key does not count as an eviction: no warning', async () => {
    const c = clock();
    const logger = recordingLogger();
    const store = new MemoryDedupeStore({ maxEntries: 1, now: c.now, logger });
    await store.claim('a', 't', 'fp', 60_000);
    await store.complete('a', 't', 1_000, 'fp');
    c.advance(2_000);
    await store.claim('b', 't', 'fp', 60_000);
    expect(logger.at('warn')).toEqual([]);
  });

  it('refuses a bad maxEntries', () => {
    expect(() => new MemoryDedupeStore({ maxEntries: 0 })).toThrow(RangeError);
    expect(() => new MemoryDedupeStore({ maxEntries: 1.5 })).toThrow(RangeError);
  });
});

describe('MemoryDedupeStore at scale (regression: eviction walked the Map over deleted-entry holes)', () => {
  it('keeps evicting the oldest completed key, in order, through 50,000 claims of a full store', async () => {
    const store = new MemoryDedupeStore({ maxEntries: 1_000, logger: recordingLogger() });
    for (let i = 0; i < 50_000; i++) {
      await store.claim(`k${i}`, 't', 'fp', 60_000);
      // Churn: every tenth delivery fails and is released, the rest complete.
      if (i % 10 === 0) await store.release(`k${i}`, 't');
      else await store.complete(`k${i}`, 't', 60_000, 'fp');
    }
    expect(store.size).toBeLessThanOrEqual(1_000);
    // The newest completed keys are remembered, the oldest forgotten.
    expect((await store.claim('k49999', 'x', 'fp', 60_000)).state).toBe('completed');
    expect((await store.claim('k49001', 'x', 'fp', 60_000)).state).toBe('completed');
    expect((await store.claim('k100', 'x', 'fp', 60_000)).state).toBe('claimed');
  });

  it('never evicts a lease, even when it has sat at the head through many evictions', async () => {
    const store = new MemoryDedupeStore({ maxEntries: 100, logger: recordingLogger() });
    await store.claim('slow-handler', 't', 'fp', 600_000);
    for (let i = 0; i < 5_000; i++) {
      await store.claim(`k${i}`, 't', 'fp', 60_000);
      await store.complete(`k${i}`, 't', 60_000, 'fp');
    }
    expect((await store.claim('slow-handler', 'other', 'fp', 60_000)).state).toBe('in-progress');
    expect(await store.complete('slow-handler', 't', 60_000, 'fp')).toBe(true);
  });
});
