import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ClaimTokens } from '../src/claim-token.js';
import type { DedupeStore } from '../src/dedupe-store.js';
import { LeaseKeeper } from '../src/lease.js';
import { recordingLogger } from './support/recording-logger.js';

/** A store that only answers `extend`, and records which tokens it was asked about. */
function extendRecorder(answer: (token: string) => boolean | Error) {
  const extended: string[] = [];
  const store = {
    extend: (_key: string, token: string) => {
      extended.push(token);
      const result = answer(token);
      return result instanceof Error ? Promise.reject(result) : Promise.resolve(result);
    },
  } as unknown as DedupeStore;
  return { store, extended };
}

const LEASE_MS = 300;
const unbounded = <T>(call: Promise<T>) => call;

describe('LeaseKeeper', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('extends exactly the leases still kept, whichever order they leave the list in', async () => {
    const { store, extended } = extendRecorder(() => true);
    const keeper = new LeaseKeeper(store, LEASE_MS, unbounded, recordingLogger());
    const keep = (token: string) => keeper.keep(`k-${token}`, token);
    const [a, b, c, d, e] = [keep('a'), keep('b'), keep('c'), keep('d'), keep('e')];
    keeper.release(c); // the middle
    keeper.release(e); // the newest (head of the list)
    keeper.release(a); // the oldest (tail)
    keeper.release(c); // twice: a no-op
    expect(keeper.size).toBe(2);
    await vi.advanceTimersByTimeAsync(LEASE_MS / 3);
    expect(extended.sort()).toEqual(['b', 'd']);
    keeper.release(b);
    keeper.release(d);
    expect(keeper.size).toBe(0);
    extended.length = 0;
    await vi.advanceTimersByTimeAsync(LEASE_MS);
    expect(extended).toEqual([]);
  });

  it('aborts the signal of a lease the store no longer holds and stops extending it, not the others', async () => {
    const { store, extended } = extendRecorder((token) => token !== 'lost');
    const logger = recordingLogger();
    const keeper = new LeaseKeeper(store, LEASE_MS, unbounded, logger);
    const kept = keeper.keep('k-kept', 'kept');
    const lost = keeper.keep('k-lost', 'lost');
    await vi.advanceTimersByTimeAsync(LEASE_MS / 3);
    expect(lost.signal.aborted).toBe(true);
    expect(String(lost.signal.reason)).toMatch(/Lease on k-lost lost: the lease was taken over or expired/);
    expect(kept.signal.aborted).toBe(false);
    expect(keeper.size).toBe(1);
    extended.length = 0;
    await vi.advanceTimersByTimeAsync(LEASE_MS / 3);
    expect(extended).toEqual(['kept']);
    expect(logger.at('error')).toHaveLength(1);
  });

  it('a store that throws synchronously loses only that lease; the tick still reaches the rest', async () => {
    const extended: string[] = [];
    const store = {
      extend: (_key: string, token: string) => {
        extended.push(token);
        if (token === 'throws') throw new Error('boom');
        return Promise.resolve(true);
      },
    } as unknown as DedupeStore;
    const keeper = new LeaseKeeper(store, LEASE_MS, unbounded, recordingLogger());
    keeper.keep('k-1', 'first');
    const throws = keeper.keep('k-2', 'throws');
    keeper.keep('k-3', 'last');
    // Past a whole lease without a successful extension, the failing one is given up.
    await vi.advanceTimersByTimeAsync(LEASE_MS + 1);
    expect(throws.signal.aborted).toBe(true);
    expect(extended.filter((t) => t === 'first').length).toBeGreaterThanOrEqual(3);
    expect(extended.filter((t) => t === 'last').length).toBeGreaterThanOrEqual(3);
    expect(keeper.size).toBe(2);
  });
});

describe('ClaimTokens', () => {
  it('never repeats, within a source or across sources (one per handler, or per process)', () => {
    const sources = [new ClaimTokens(), new ClaimTokens()];
    const seen = new Set<string>();
    for (let i = 0; i < 10_000; i++) for (const source of sources) seen.add(source.next());
    expect(seen.size).toBe(20_000);
  });
});
