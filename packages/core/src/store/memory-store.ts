import { MemoryLedger } from '../ledger/memory-ledger.js';
import { consoleLogger, safeLog, type WebhookLogger } from '../observe/logger.js';
import { RateLimiter } from '../observe/rate-limit.js';
import { elapsedClock } from '../util/elapsed-clock.js';
import {
  type CompletedRecord,
  expiryOf,
  packRecord,
  fingerprintOf as recordFingerprint,
  tagOf,
  tokenTag,
} from './completed-record.js';
import type { ClaimOutcome, DedupeStore } from './dedupe-store.js';
import { noteMemoryStore } from './memory-store-notice.js';

/**
 * Options of `MemoryDedupeStore`.
 *
 * @example
 * ```ts
 * const options: MemoryDedupeStoreOptions = { maxEntries: 50_000, logger: pino() };
 * ```
 */
export interface MemoryDedupeStoreOptions {
  /**
   * Most keys kept. When full, the oldest completed key is forgotten first (logged, rate-limited); a lease
   * in progress never is. Default 100,000.
   */
  maxEntries?: number;
  /** Where evictions of unexpired records are reported. Default: the console. */
  logger?: WebhookLogger;
  /** Clock in milliseconds, for tests. Default `Date.now`. */
  now?: () => number;
}

/**
 * A key in progress: the claim token that holds it, the fingerprint it claimed with, when the lease ends,
 * and its slot in the store's queue (so its completed record takes the same place).
 */
class Lease {
  constructor(
    public token: string,
    readonly fingerprint: string,
    public expiresAt: number,
    public slot: number,
  ) {}
}

type Value = Lease | CompletedRecord;

/**
 * The key, flattened before it is stored. A key made by concatenation (`payment.paid:${paymentId}`) is a
 * rope; hashing it into the Map does not flatten it, and the Map would keep the rope and its pieces alive
 * (16 bytes a key more, `pnpm bench memory`). Reading a character flattens it in place, and the garbage
 * collector then keeps only the flat string.
 */
function flat(key: string): string {
  key.charCodeAt(0);
  return key;
}

const expiresAtOf = (value: Value): number => (typeof value === 'string' ? expiryOf(value) : value.expiresAt);

// Every answer is known synchronously, and the common ones are the same every time: they are handed out as
// promises settled once, so a delivery allocates none.
const CLAIMED: ClaimOutcome = Object.freeze({ state: 'claimed' });
const SETTLED_CLAIMED: Promise<ClaimOutcome> = Promise.resolve(CLAIMED);
const SETTLED_TRUE: Promise<boolean> = Promise.resolve(true);
const SETTLED_FALSE: Promise<boolean> = Promise.resolve(false);
const EVICTION_LOG_PERIOD_MS = 10_000;

/**
 * A `DedupeStore` in this process's memory: exactly-once within one process, lost on restart.
 *
 * Right for development, tests and single-instance apps whose database also guards the credit. With
 * several instances, use `RedisDedupeStore` from `@service-pay/redis`, or `PostgresStore` from
 * `@service-pay/postgres` to commit the dedupe record with the credit.
 *
 * Memory: a completed key is one packed string (`CompletedRecord`), about 140 bytes a key with the Map's
 * own entry, the key itself and its queue slot (`pnpm bench memory`); only keys in progress are objects.
 * Keys are also kept in a queue in claim order, which is close to expiry order (leases are short next to
 * the retention): expired keys are swept from its head with bounded work per claim and, when `maxEntries`
 * is reached, the oldest completed key is evicted, with a warning that says how old it was (a late
 * duplicate of it would run the handler again). A lease in progress is never evicted: when only leases are
 * left, the claim is refused (503) instead. A queue of its own, not the Map's iteration order: V8 leaves a
 * hole for every deleted Map entry until it rehashes, and walking those from the front made every claim of
 * a full store slower (regression test in memory-store.test.ts); and a Map iterator kept across calls
 * would hold on to every table the Map outgrew.
 *
 * @example
 * ```ts
 * import { MemoryDedupeStore, createWebhookHandler } from '@service-pay/core';
 *
 * const handler = createWebhookHandler({ secret, store: new MemoryDedupeStore({ maxEntries: 10_000 }), onPaymentPaid });
 * ```
 */
export class MemoryDedupeStore implements DedupeStore {
  readonly kind = 'lease';
  readonly inProcess = true;
  /**
   * The operator's ledger of failing payments, in this process's memory (at most 10,000 entries): gone
   * with the process, like the store's records.
   */
  readonly ledger: MemoryLedger = new MemoryLedger({ handled: (key) => this.#handled(key) });
  readonly #entries = new Map<string, Value>();
  /**
   * Keys and their values in claim order, from `#head`: two parallel arrays (a pair object per key would
   * cost more than the rest of a completed key). A slot whose value is no longer the Map's for its key
   * (released, re-claimed) is skipped when reached.
   */
  #queueKeys: string[] = [];
  #queueValues: Value[] = [];
  #head = 0;
  /**
   * The sweep stopped at a completed key that nothing can change before it expires, so the sweep has
   * nothing to do until then. Most claims thus touch no old entry at all: in a large store that is a cache
   * miss or two per delivery saved.
   */
  #quietUntil = 0;
  readonly #maxEntries: number;
  readonly #now: () => number;
  readonly #logger: WebhookLogger;
  readonly #evictionLog: RateLimiter;
  /** The retention the latest completion asked for: what an evicted record's age is read against. */
  #retainMs = 0;

  constructor(options: MemoryDedupeStoreOptions = {}) {
    const maxEntries = options.maxEntries ?? 100_000;
    if (!Number.isSafeInteger(maxEntries) || maxEntries < 1) {
      throw new RangeError('MemoryDedupeStore: maxEntries must be a positive integer.');
    }
    this.#maxEntries = maxEntries;
    // Milliseconds since the store first read the clock: small integers stay unboxed in each lease, and
    // expiries fit the packed record (see elapsedClock).
    this.#now = elapsedClock(options.now ?? Date.now);
    this.#logger = options.logger ?? consoleLogger;
    noteMemoryStore(this.#logger);
    this.#evictionLog = new RateLimiter(
      EVICTION_LOG_PERIOD_MS,
      (_kind, suppressed) =>
        safeLog(
          this.#logger,
          'warn',
          { evicted: suppressed, maxEntries: this.#maxEntries },
          `MemoryDedupeStore: ${suppressed} more completed keys were forgotten before their retention ended (store full).`,
        ),
      this.#now,
    );
  }

  /** Whether `key` is recorded as completed and not expired. */
  #handled(key: string): boolean {
    const existing = this.#entries.get(key);
    return typeof existing === 'string' && expiryOf(existing) > this.#now();
  }

  /** Number of keys held (leases and completed), expired ones not yet swept included. */
  get size(): number {
    return this.#entries.size;
  }

  claim(key: string, token: string, fingerprint: string, leaseMs: number): Promise<ClaimOutcome> {
    const now = this.#now();
    const existing = this.#entries.get(key);
    if (existing !== undefined) {
      if (typeof existing === 'string') {
        if (expiryOf(existing) > now) {
          return Promise.resolve({ state: 'completed', fingerprint: recordFingerprint(existing) });
        }
      } else if (existing.expiresAt > now) {
        return Promise.resolve({
          state: 'in-progress',
          fingerprint: existing.fingerprint,
          retryAfterMs: existing.expiresAt - now,
        });
      }
      this.#entries.delete(key);
    }
    try {
      this.#makeRoom(now);
    } catch (error) {
      return Promise.reject(error);
    }
    this.#insert(flat(key), new Lease(token, fingerprint, now + leaseMs, this.#queueKeys.length));
    return SETTLED_CLAIMED;
  }

  complete(key: string, token: string, retainMs: number, fingerprint: string): Promise<boolean> {
    const now = this.#now();
    const existing = this.#entries.get(key);
    const tag = tokenTag(token);
    if (existing !== undefined && expiresAtOf(existing) > now) {
      this.#retainMs = retainMs;
      if (typeof existing === 'string') {
        if (tagOf(existing) === tag) return SETTLED_TRUE; // a retried complete of ours
        // Another attempt completed it first: ours is recorded all the same (the handler has run), and answers false.
        this.#entries.delete(key);
        this.#insert(flat(key), packRecord(now + retainMs, tag, fingerprint));
        return SETTLED_FALSE;
      }
      // The record takes the lease's place, in the Map and in the queue, whoever held it: a foreign holder's
      // next extend (confirmLease) then fails, so it aborts instead of committing a second credit.
      const ours = existing.token === token;
      const record = packRecord(now + retainMs, tag, ours ? existing.fingerprint : fingerprint);
      this.#entries.set(key, record);
      this.#queueValues[existing.slot] = record;
      return ours ? SETTLED_TRUE : SETTLED_FALSE;
    }
    // The key is gone (expired, or forgotten): the handler has run, so a record beats none.
    if (existing !== undefined) this.#entries.delete(key);
    try {
      this.#makeRoom(now);
    } catch (error) {
      return Promise.reject(error);
    }
    this.#retainMs = retainMs;
    this.#insert(flat(key), packRecord(now + retainMs, tag, fingerprint));
    return SETTLED_TRUE;
  }

  release(key: string, token: string): Promise<boolean> {
    if (this.#held(key, token) === undefined) return SETTLED_FALSE;
    this.#entries.delete(key);
    return SETTLED_TRUE;
  }

  extend(key: string, token: string, leaseMs: number): Promise<boolean> {
    const lease = this.#held(key, token);
    if (lease === undefined) return SETTLED_FALSE;
    lease.expiresAt = this.#now() + leaseMs;
    return SETTLED_TRUE;
  }

  #held(key: string, token: string): Lease | undefined {
    const value = this.#entries.get(key);
    return typeof value === 'object' && value.token === token && value.expiresAt > this.#now() ? value : undefined;
  }

  #insert(key: string, value: Value): void {
    this.#entries.set(key, value);
    this.#queueKeys.push(key);
    this.#queueValues.push(value);
  }

  /** Moves a live lease from the head to the back: it is not evictable, and its turn comes again later. */
  #requeue(key: string, lease: Lease): void {
    lease.slot = this.#queueKeys.length;
    this.#queueKeys.push(key);
    this.#queueValues.push(lease);
  }

  #makeRoom(now: number): void {
    // Sweep a few keys from the head on every claim: bounded work, and memory follows traffic.
    for (let budget = 8; budget > 0 && this.#head < this.#queueKeys.length && now >= this.#quietUntil; budget--) {
      const key = this.#queueKeys[this.#head] as string;
      const value = this.#queueValues[this.#head] as Value;
      if (this.#entries.get(key) !== value) this.#head++;
      else if (expiresAtOf(value) <= now) {
        this.#entries.delete(key);
        this.#head++;
      } else if (typeof value === 'object') {
        this.#head++;
        this.#requeue(key, value);
      } else {
        // Completed and unexpired: it can be neither claimed, released nor extended before it expires.
        this.#quietUntil = expiryOf(value);
        break;
      }
    }
    if (this.#entries.size >= this.#maxEntries) this.#evictOldestCompleted(now);
    this.#compactQueue();
  }

  #evictOldestCompleted(now: number): void {
    // Every live lease is stepped over at most once; then only leases are left.
    for (let leases = 0; leases < this.#entries.size && this.#head < this.#queueKeys.length; ) {
      const key = this.#queueKeys[this.#head] as string;
      const value = this.#queueValues[this.#head++] as Value;
      if (this.#entries.get(key) !== value) continue;
      if (typeof value === 'string' || value.expiresAt <= now) {
        this.#entries.delete(key);
        this.#quietUntil = 0; // the head moved: the sweep looks at it again
        if (typeof value === 'string' && expiryOf(value) > now) this.#reportEviction(key, value, now);
        return;
      }
      this.#requeue(key, value);
      leases++;
    }
    throw new Error(
      `MemoryDedupeStore is full: all ${this.#maxEntries} entries are deliveries in progress. Raise maxEntries.`,
    );
  }

  #compactQueue(): void {
    // Drop the consumed head once it is most of the arrays, and the slots of keys that left the Map
    // (released, re-claimed) once they outnumber the live ones, so the queue stays proportional to the
    // store. Leases learn their new slots.
    const pending = this.#queueKeys.length - this.#head;
    const compact = (this.#head > 1024 && this.#head > pending) || pending > 2 * this.#entries.size + 1024;
    if (!compact) return;
    const keys: string[] = [];
    const values: Value[] = [];
    for (let i = this.#head; i < this.#queueKeys.length; i++) {
      const key = this.#queueKeys[i] as string;
      const value = this.#queueValues[i] as Value;
      if (this.#entries.get(key) !== value) continue;
      if (typeof value === 'object') value.slot = keys.length;
      keys.push(key);
      values.push(value);
    }
    this.#queueKeys = keys;
    this.#queueValues = values;
    this.#head = 0;
  }

  #reportEviction(key: string, record: CompletedRecord, now: number): void {
    if (!this.#evictionLog.admit('eviction', now)) return;
    // Its age from its expiry and the retention completions ask for (a handler's retainMs is one value).
    const ageMs = Math.max(0, now - (expiryOf(record) - this.#retainMs));
    safeLog(
      this.#logger,
      'warn',
      { key, ageMs, maxEntries: this.#maxEntries },
      `MemoryDedupeStore is full (maxEntries ${this.#maxEntries}): forgot a completed key ${Math.round(ageMs / 1000)} s old before its retention ended; a late duplicate of it would run the handler again. Raise maxEntries, or use a shared store (Redis, PostgreSQL).`,
    );
  }
}
