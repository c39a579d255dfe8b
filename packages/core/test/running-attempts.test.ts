import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { AttemptStoppedError } from '../src/index.js';
import { ClaimTokens } from '../src/pipeline/claim-token.js';
import { RunningAttempts } from '../src/pipeline/running-attempts.js';
import type { DedupeStore } from '../src/store/dedupe-store.js';
import { recordingLogger } from './support/recording-logger.js';

/** A store that only answers `extend`, and records which tokens it was asked about. */
function extendRecorder(answer: (token: string) => boolean | Error | 'throw-sync') {
  const extended: string[] = [];
  const store = {
    extend: (_key: string, token: string) => {
      extended.push(token);
      const result = answer(token);
      if (result === 'throw-sync') throw new Error('boom');
      return result instanceof Error ? Promise.reject(result) : Promise.resolve(result);
    },
  } as unknown as DedupeStore;
  return { store, extended };
}

const LEASE_MS = 300;

function watcher(store: DedupeStore | undefined, options: { handlerTimeoutMs?: number } = {}) {
  const logger = recordingLogger();
  const running = new RunningAttempts({
    store,
    leaseMs: LEASE_MS,
    handlerTimeoutMs: options.handlerTimeoutMs ?? 60_000,
    logger,
    bounded: (pending) => pending,
    now: Date.now,
  });
  const start = (token: string) =>
    running.start(`k-${token}`, token, Date.now(), { logFields: { paymentId: `p_${token}` } });
  return { running, logger, start };
}

describe('RunningAttempts: heartbeat, lease loss, deadline, slow warning', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('extends exactly the attempts still running, whichever order they leave the list in', async () => {
    const { store, extended } = extendRecorder(() => true);
    const { running, start } = watcher(store);
    const [a, b, c, d, e] = ['a', 'b', 'c', 'd', 'e'].map(start) as [
      ReturnType<typeof start>,
      ReturnType<typeof start>,
      ReturnType<typeof start>,
      ReturnType<typeof start>,
      ReturnType<typeof start>,
    ];
    running.finish(c); // the middle
    running.finish(e); // the newest (head of the list)
    running.finish(a); // the oldest (tail)
    running.finish(c); // twice: a no-op
    expect(running.size).toBe(2);
    await vi.advanceTimersByTimeAsync(LEASE_MS / 3 + running.tickMs);
    expect(extended.sort()).toEqual(['b', 'd']);
    running.finish(b);
    running.finish(d);
    expect(running.size).toBe(0);
    extended.length = 0;
    await vi.advanceTimersByTimeAsync(LEASE_MS);
    expect(extended).toEqual([]);
    expect(vi.getTimerCount()).toBe(0); // the interval stopped itself
  });

  it('keeps a lease alive for many lease lengths while the store confirms it', async () => {
    const { store, extended } = extendRecorder(() => true);
    const { start } = watcher(store);
    const attempt = start('long');
    await vi.advanceTimersByTimeAsync(LEASE_MS * 10);
    expect(attempt.signal.aborted).toBe(false);
    expect(extended.length).toBeGreaterThanOrEqual(25);
  });

  it('aborts the signal within one heartbeat when the store no longer holds the lease; not the others', async () => {
    const { store, extended } = extendRecorder((token) => token !== 'lost');
    const { running, logger, start } = watcher(store);
    const kept = start('kept');
    const lost = start('lost');
    await vi.advanceTimersByTimeAsync(LEASE_MS / 3 + running.tickMs);
    expect(lost.signal.aborted).toBe(true);
    const reason = lost.signal.reason as AttemptStoppedError;
    expect(reason).toBeInstanceOf(AttemptStoppedError);
    expect(reason.code).toBe('LEASE_LOST');
    expect(kept.signal.aborted).toBe(false);
    extended.length = 0;
    await vi.advanceTimersByTimeAsync(LEASE_MS / 3 + running.tickMs);
    expect(extended).toEqual(['kept']);
    expect(logger.at('error')).toHaveLength(1);
    expect(logger.at('error')[0]?.fields).toMatchObject({ paymentId: 'p_lost' });
  });

  it('when extensions keep failing, declares the lease lost by the local clock before it runs out', async () => {
    const { store } = extendRecorder(() => new Error('ECONNRESET'));
    const { running, logger, start } = watcher(store);
    const attempt = start('unreachable');
    await vi.advanceTimersByTimeAsync(LEASE_MS - 2 * running.tickMs);
    expect(attempt.signal.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(running.tickMs);
    expect(attempt.signal.aborted).toBe(true); // one tick before the lease's end, never after
    expect((attempt.signal.reason as AttemptStoppedError).code).toBe('LEASE_LOST');
    expect(logger.at('warn').length).toBeGreaterThan(0); // each failed extension is a warning first
  });

  it('a store that throws synchronously loses only that lease; the tick still reaches the rest', async () => {
    const { store, extended } = extendRecorder((token) => (token === 'throws' ? 'throw-sync' : true));
    const { running, start } = watcher(store);
    start('first');
    const throws = start('throws');
    start('last');
    await vi.advanceTimersByTimeAsync(LEASE_MS + running.tickMs);
    expect(throws.signal.aborted).toBe(true);
    expect(extended.filter((t) => t === 'first').length).toBeGreaterThanOrEqual(2);
    expect(extended.filter((t) => t === 'last').length).toBeGreaterThanOrEqual(2);
    expect(running.size).toBe(3); // a lost lease of a running handler is still watched (deadline)
  });

  it('at handlerTimeoutMs: aborts with HANDLER_TIMEOUT, settles the wait, stops the heartbeat', async () => {
    const { store, extended } = extendRecorder(() => true);
    const { running, start } = watcher(store, { handlerTimeoutMs: 1_000 });
    const attempt = start('hung');
    const deadline = vi.fn();
    attempt.onDeadline = deadline;
    await vi.advanceTimersByTimeAsync(1_000 - running.tickMs);
    expect(deadline).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(2 * running.tickMs);
    expect(deadline).toHaveBeenCalledOnce();
    expect((attempt.signal.reason as AttemptStoppedError).code).toBe('HANDLER_TIMEOUT');
    extended.length = 0;
    await vi.advanceTimersByTimeAsync(LEASE_MS * 3);
    expect(extended).toEqual([]); // not kept alive: the lease runs out and a retry can run it again
    expect(running.size).toBe(0);
  });

  it('warns once about a handler still running at 4 s, while it runs (a timer, not after the fact)', async () => {
    const { store } = extendRecorder(() => true);
    const { running, logger, start } = watcher(store);
    start('slow');
    await vi.advanceTimersByTimeAsync(4_000 - running.tickMs);
    expect(logger.at('warn')).toEqual([]);
    await vi.advanceTimersByTimeAsync(running.tickMs);
    expect(logger.at('warn')).toHaveLength(1);
    expect(logger.at('warn')[0]?.message).toMatch(/over 4 s.*5 s/);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(logger.at('warn')).toHaveLength(1);
  });

  it('confirm() resolves while the lease holds, throws and aborts once the store says it is gone', async () => {
    let held = true;
    const { store } = extendRecorder(() => held);
    const { running, start } = watcher(store);
    const attempt = start('c');
    await expect(running.confirm(attempt)).resolves.toBeUndefined();
    held = false;
    await expect(running.confirm(attempt)).rejects.toMatchObject({ code: 'LEASE_LOST' });
    expect(attempt.signal.aborted).toBe(true);
    await expect(running.confirm(attempt)).rejects.toMatchObject({ code: 'LEASE_LOST' });
  });

  it('confirm() throws, without aborting, when the store cannot say', async () => {
    const { store } = extendRecorder(() => new Error('timeout'));
    const { running, start } = watcher(store);
    const attempt = start('c');
    await expect(running.confirm(attempt)).rejects.toMatchObject({ code: 'LEASE_LOST' });
    expect(attempt.signal.aborted).toBe(false);
  });

  it('without a lease store (transactional), watches the deadline only', async () => {
    const { running } = watcher(undefined, { handlerTimeoutMs: 500 });
    const attempt = running.start('k', undefined, Date.now(), { logFields: {} });
    await expect(running.confirm(attempt)).resolves.toBeUndefined();
    await vi.advanceTimersByTimeAsync(500 + running.tickMs);
    expect((attempt.signal.reason as AttemptStoppedError).code).toBe('HANDLER_TIMEOUT');
  });
});

describe('ClaimTokens', () => {
  it('never repeats, within a source or across sources (one per handler, or per process), and stays short', () => {
    const sources = [new ClaimTokens(), new ClaimTokens()];
    const seen = new Set<string>();
    for (let i = 0; i < 10_000; i++) for (const source of sources) seen.add(source.next());
    expect(seen.size).toBe(20_000);
    expect(sources[0]?.next().length).toBeLessThanOrEqual(24);
  });
});
