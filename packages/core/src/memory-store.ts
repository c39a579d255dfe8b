import type { ClaimOutcome, DedupeStore } from './dedupe-store.js';

/**
 * Options of `MemoryDedupeStore`.
 *
 * @example
 * ```ts
 * const options: MemoryDedupeStoreOptions = { maxEntries: 50_000 };
 * ```
 */
export interface MemoryDedupeStoreOptions {
  /** Most keys kept. When full, the oldest completed key is forgotten first; a held lease never is. Default 100,000. */
  maxEntries?: number;
  /** Clock in milliseconds, for tests. Default `Date.now`. */
  now?: () => number;
}

// One small object per key. A completed entry drops its token, so a million of them stay under 250 bytes
// each including the key, the fingerprint and its place in the queue (measured by `pnpm bench`).
class Entry {
  constructor(
    readonly key: string,
    public token: string | undefined,
    public fingerprint: string,
    public expiresAt: number,
  ) {}
}

// Every answer is known synchronously, and the common ones are the same every time: they are handed out as
// promises settled once, so a delivery allocates none. The pipeline knows the two answers of a first
// delivery by identity and reads their value without awaiting them (see handleOnce in handler.ts).
export const CLAIMED: ClaimOutcome = Object.freeze({ state: 'claimed' });
export const SETTLED_CLAIMED: Promise<ClaimOutcome> = Promise.resolve(CLAIMED);
export const SETTLED_TRUE: Promise<boolean> = Promise.resolve(true);
const SETTLED_FALSE = Promise.resolve(false);

/**
 * A `DedupeStore` in this process's memory: exactly-once within one process, lost on restart.
 *
 * Right for development, tests and single-instance apps whose database also guards the credit. With
 * several instances, use `RedisDedupeStore` from `@service-pay/redis`.
 *
 * Entries are also kept in a queue in claim order, which is close to expiry order (leases are short next
 * to the retention): expired ones are swept from its head with bounded work per claim and, when
 * `maxEntries` is reached, the oldest completed key is the one evicted. A queue of its own, not the Map's
 * iteration order: V8 leaves a hole for every deleted Map entry until it rehashes, and walking those from
 * the front made every claim of a full store slower (regression test in memory-store.test.ts).
 *
 * @example
 * ```ts
 * import { MemoryDedupeStore, createWebhookHandler } from '@service-pay/core';
 *
 * const handler = createWebhookHandler({ secret, store: new MemoryDedupeStore({ maxEntries: 10_000 }), onPaymentPaid });
 * ```
 */
export class MemoryDedupeStore implements DedupeStore {
  readonly #entries = new Map<string, Entry>();
  /** Entries in claim order from `#head`; a slot whose entry left the Map is skipped when reached. */
  #queue: Entry[] = [];
  #head = 0;
  /**
   * The sweep stopped at a completed entry that nothing can change before it expires, so the sweep has
   * nothing to do until then. Most claims thus touch no old entry at all: in a large store that is a cache
   * miss or two per delivery saved.
   */
  #quietUntil = 0;
  readonly #maxEntries: number;
  readonly #now: () => number;

  constructor(options: MemoryDedupeStoreOptions = {}) {
    const maxEntries = options.maxEntries ?? 100_000;
    if (!Number.isSafeInteger(maxEntries) || maxEntries < 1) {
      throw new RangeError('MemoryDedupeStore: maxEntries must be a positive integer.');
    }
    this.#maxEntries = maxEntries;
    this.#now = options.now ?? Date.now;
  }

  /** Number of keys held (leases and completed), expired ones not yet swept included. */
  get size(): number {
    return this.#entries.size;
  }

  claim(key: string, token: string, fingerprint: string, leaseMs: number): Promise<ClaimOutcome> {
    const now = this.#now();
    const existing = this.#entries.get(key);
    if (existing !== undefined && existing.expiresAt > now) {
      return Promise.resolve(
        existing.token === undefined
          ? { state: 'completed', fingerprint: existing.fingerprint }
          : { state: 'in-progress', fingerprint: existing.fingerprint, retryAfterMs: existing.expiresAt - now },
      );
    }
    if (existing !== undefined) this.#entries.delete(key);
    try {
      this.#makeRoom(now);
    } catch (error) {
      return Promise.reject(error);
    }
    const entry = new Entry(key, token, fingerprint, now + leaseMs);
    this.#entries.set(key, entry);
    this.#queue.push(entry);
    return SETTLED_CLAIMED;
  }

  complete(key: string, token: string, retainMs: number): Promise<boolean> {
    const entry = this.#held(key, token);
    if (entry === undefined) return SETTLED_FALSE;
    entry.token = undefined;
    // Updated in place, not re-inserted: a Map keeps a hole for every deletion until it next grows.
    entry.expiresAt = this.#now() + retainMs;
    return SETTLED_TRUE;
  }

  release(key: string, token: string): Promise<boolean> {
    const entry = this.#held(key, token);
    if (entry === undefined) return SETTLED_FALSE;
    this.#entries.delete(key);
    return SETTLED_TRUE;
  }

  extend(key: string, token: string, leaseMs: number): Promise<boolean> {
    const entry = this.#held(key, token);
    if (entry === undefined) return SETTLED_FALSE;
    entry.expiresAt = this.#now() + leaseMs;
    return SETTLED_TRUE;
  }

  #held(key: string, token: string): Entry | undefined {
    const entry = this.#entries.get(key);
    return entry !== undefined && entry.token === token && entry.expiresAt > this.#now() ? entry : undefined;
  }

  #makeRoom(now: number): void {
    // Sweep a few entries from the head on every claim: bounded work, and memory follows traffic. A live
    // lease is moved to the back (it is not evictable, and its turn comes again once it completes).
    for (let budget = 8; budget > 0 && this.#head < this.#queue.length && now >= this.#quietUntil; budget--) {
      const entry = this.#queue[this.#head] as Entry;
      if (this.#entries.get(entry.key) !== entry) this.#head++;
      else if (entry.expiresAt <= now) {
        this.#entries.delete(entry.key);
        this.#head++;
      } else if (entry.token !== undefined) {
        this.#head++;
        this.#queue.push(entry);
      } else {
        // Completed and unexpired: it can be neither claimed, released nor extended before it expires.
        this.#quietUntil = entry.expiresAt;
        break;
      }
    }
    if (this.#entries.size >= this.#maxEntries) this.#evictOldestCompleted(now);
    this.#compactQueue();
  }

  #evictOldestCompleted(now: number): void {
    // Every live lease is stepped over at most once; then only leases are left.
    for (let leases = 0; leases < this.#entries.size && this.#head < this.#queue.length; ) {
      const entry = this.#queue[this.#head++] as Entry;
      if (this.#entries.get(entry.key) !== entry) continue;
      if (entry.token === undefined || entry.expiresAt <= now) {
        this.#entries.delete(entry.key);
        this.#quietUntil = 0; // the head moved: the sweep looks at it again
        return;
      }
      this.#queue.push(entry);
      leases++;
    }
    throw new Error(
      `MemoryDedupeStore is full: all ${this.#maxEntries} entries are deliveries in progress. Raise maxEntries.`,
    );
  }

  #compactQueue(): void {
    // Drop the consumed head once it is most of the array, and the slots of entries that left the Map
    // (released, re-claimed) once they outnumber the live ones, so the queue stays proportional to the store.
    const pending = this.#queue.length - this.#head;
    if (this.#head > 1024 && this.#head > pending) {
      this.#queue = this.#queue.slice(this.#head);
      this.#head = 0;
    } else if (pending > 2 * this.#entries.size + 1024) {
      this.#queue = this.#queue.slice(this.#head).filter((entry) => this.#entries.get(entry.key) === entry);
      this.#head = 0;
    }
  }
}
