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
// each including the key and fingerprint (measured by `pnpm bench`).
// Outcomes are plain data that the pipeline only reads, so the common one is shared.
const CLAIMED: ClaimOutcome = Object.freeze({ state: 'claimed' });

class Entry {
  constructor(
    public token: string | undefined,
    public fingerprint: string,
    public expiresAt: number,
  ) {}
}

/**
 * A `DedupeStore` in this process's memory: exactly-once within one process, lost on restart.
 *
 * Right for development, tests and single-instance apps whose database also guards the credit. With
 * several instances, use `RedisDedupeStore` from `@service-pay/redis`.
 *
 * Entries sit in a Map in claim order, which is close to expiry order (leases are short next to the
 * retention), so expired ones are swept from the front with bounded work per claim and, when
 * `maxEntries` is reached, the oldest completed key is the one evicted.
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

  async claim(key: string, token: string, fingerprint: string, leaseMs: number): Promise<ClaimOutcome> {
    const now = this.#now();
    const existing = this.#entries.get(key);
    if (existing !== undefined && existing.expiresAt > now) {
      return existing.token === undefined
        ? { state: 'completed', fingerprint: existing.fingerprint }
        : { state: 'in-progress', fingerprint: existing.fingerprint, retryAfterMs: existing.expiresAt - now };
    }
    if (existing !== undefined) this.#entries.delete(key);
    this.#makeRoom(now);
    this.#entries.set(key, new Entry(token, fingerprint, now + leaseMs));
    return CLAIMED;
  }

  async complete(key: string, token: string, retainMs: number): Promise<boolean> {
    const entry = this.#held(key, token);
    if (entry === undefined) return false;
    entry.token = undefined;
    // Updated in place, not re-inserted: a Map keeps a hole for every deletion until it next grows.
    entry.expiresAt = this.#now() + retainMs;
    return true;
  }

  async release(key: string, token: string): Promise<boolean> {
    if (this.#held(key, token) === undefined) return false;
    this.#entries.delete(key);
    return true;
  }

  async extend(key: string, token: string, leaseMs: number): Promise<boolean> {
    const entry = this.#held(key, token);
    if (entry === undefined) return false;
    entry.expiresAt = this.#now() + leaseMs;
    return true;
  }

  #held(key: string, token: string): Entry | undefined {
    const entry = this.#entries.get(key);
    return entry !== undefined && entry.token === token && entry.expiresAt > this.#now() ? entry : undefined;
  }

  #makeRoom(now: number): void {
    // Sweep a few expired entries from the front on every claim: bounded work, and memory follows traffic.
    // A live lease at the front is stepped over; a live completed entry means the rest is younger.
    let budget = 8;
    for (const [key, entry] of this.#entries) {
      if (budget-- === 0) break;
      if (entry.expiresAt <= now) this.#entries.delete(key);
      else if (entry.token === undefined) break;
    }
    if (this.#entries.size < this.#maxEntries) return;
    for (const [key, entry] of this.#entries) {
      if (entry.token === undefined || entry.expiresAt <= now) {
        this.#entries.delete(key);
        return;
      }
    }
    throw new Error(
      `MemoryDedupeStore is full: all ${this.#maxEntries} entries are deliveries in progress. Raise maxEntries.`,
    );
  }
}
