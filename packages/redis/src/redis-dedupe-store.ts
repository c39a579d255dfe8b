import type { ClaimOutcome, DedupeStore } from '@service-pay/core';
import { type IoredisLike, ioredisCommands, isIoredisLike } from './clients/ioredis-commands.js';
import {
  isNodeRedisLike,
  type NodeRedisClusterLike,
  type NodeRedisLike,
  nodeRedisCommands,
} from './clients/node-redis-commands.js';
import type { RedisCommands, StoreScript } from './clients/redis-commands.js';
import { isUpstashLike, type UpstashLike, upstashCommands } from './clients/upstash-commands.js';
import { noteLeaseStore } from './lease-store-notice.js';
import { RedisLedger } from './redis-ledger.js';

/**
 * Every client the store takes, told apart by shape: ioredis `Redis` and `Cluster`, iovalkey (the same
 * API), node-redis 5.11+ and 6 clients and clusters (`redis`), and `@upstash/redis` (REST, for runtimes without TCP).
 *
 * @example
 * ```ts
 * import { createClient } from 'redis';
 * const client: RedisClient = await createClient({ url: process.env.REDIS_URL }).connect();
 * ```
 */
export type RedisClient = IoredisLike | NodeRedisLike | NodeRedisClusterLike | UpstashLike;

/**
 * Options of `RedisDedupeStore`.
 *
 * @example
 * ```ts
 * import { Redis } from 'ioredis';
 * import { failFastRedisOptions } from '@service-pay/redis';
 *
 * const options: RedisDedupeStoreOptions = {
 *   client: new Redis(process.env.REDIS_URL!, failFastRedisOptions()),
 *   keyPrefix: 'shop-a:dedupe:',
 * };
 * ```
 */
export interface RedisDedupeStoreOptions {
  /**
   * An ioredis `Redis` or `Cluster` (or iovalkey's), a node-redis client or cluster (5.11+ or 6.2+), or an
   * `@upstash/redis` client. Give the store its own client, built so that an outage fails commands at once
   * instead of queueing them (ioredis: `failFastRedisOptions()`; node-redis: `disableOfflineQueue: true`;
   * see the README): a queued claim would run later, long after its delivery was answered.
   */
  client: RedisClient;
  /** Put before every dedupe key. Default `service-pay:dedupe:`. Avoid `{hash tags}`: keys should spread over Cluster slots. */
  keyPrefix?: string;
}

/*
 * One Redis string per dedupe key, one of two shapes:
 *   lease:     'L' <byte length of token> ':' <token> <fingerprint>   with PX = the lease
 *   completed: 'C' <byte length of token> ':' <token> <fingerprint>   with PX = retainMs
 * The length prefix makes "is this token the holder?" an exact prefix comparison whatever bytes the token
 * and fingerprint contain, and a single GET reads everything a claim needs. A completed record keeps the
 * token that completed it, so a `complete` retried after its first try landed (the answer was lost) is
 * told apart from another attempt's. A string is also the smallest thing Redis stores per key, which
 * matters for a week of completed payments.
 *
 * Every script touches exactly the one key it is given in KEYS, so Redis Cluster routes it to the slot's
 * master; the lease is a server-side TTL, so no app clock is ever compared with another.
 */
/** The lease and completed prefixes of the token in ARGV[1] (the shapes above, without the fingerprint). */
const TOKEN_VALUES = `local held = 'L' .. string.len(ARGV[1]) .. ':' .. ARGV[1]
local done = 'C' .. string.len(ARGV[1]) .. ':' .. ARGV[1]
`;
const TOKEN_PREFIXES = `${TOKEN_VALUES}local v = redis.call('GET', KEYS[1])
`;
const HOLDS = `v and string.sub(v, 1, string.len(held)) == held`;

const SCRIPTS = {
  // Redis < 7 only (see RedisDedupeStore.claim). ARGV: token, fingerprint, leaseMs. Replies {0} claimed,
  // {1, fingerprint, pttl} in progress, {2, fingerprint} completed.
  servicePayDedupeClaim: {
    lua: `local v = redis.call('GET', KEYS[1])
if not v then
  redis.call('SET', KEYS[1], 'L' .. string.len(ARGV[1]) .. ':' .. ARGV[1] .. ARGV[2], 'PX', ARGV[3])
  return {0}
end
local kind = string.sub(v, 1, 1)
local sep = (kind == 'L' or kind == 'C') and string.find(v, ':', 2, true)
if not sep then return redis.error_reply('service-pay: ' .. KEYS[1] .. ' holds a value this store did not write') end
local fingerprint = string.sub(v, sep + 1 + tonumber(string.sub(v, 2, sep - 1)))
if kind == 'C' then return {2, fingerprint} end
local ttl = redis.call('PTTL', KEYS[1])
-- Time is frozen while a script runs, so the key cannot expire under us; 1 keeps Retry-After positive.
if ttl < 1 then ttl = 1 end
return {1, fingerprint, ttl}`,
  },
  // Redis < 6.2 only (see RedisDedupeStore.complete). ARGV: token, retainMs, the completed value. Records
  // the key as completed whatever it finds (the handler has run) and answers 1 when the old value was this token's
  // lease or record, or nothing; 0 when another token held or completed the key.
  servicePayDedupeComplete: {
    lua: `local v = redis.call('GET', KEYS[1])
redis.call('SET', KEYS[1], ARGV[3], 'PX', ARGV[2])
if not v then return 1 end
${TOKEN_VALUES}if string.sub(v, 1, string.len(held)) == held or string.sub(v, 1, string.len(done)) == done then return 1 end
return 0`,
  },
  // ARGV: token.
  servicePayDedupeRelease: {
    lua: `${TOKEN_PREFIXES}if not (${HOLDS}) then return 0 end
redis.call('DEL', KEYS[1])
return 1`,
  },
  // ARGV: token, leaseMs.
  servicePayDedupeExtend: {
    lua: `${TOKEN_PREFIXES}if not (${HOLDS}) then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`,
  },
} satisfies Record<string, { lua: string }>;

type ClaimReply = [0] | [1, string, number] | [2, string];

/** The scripts by name, as every client family runs them (ioredis registers them under these names). */
const SCRIPT: { [K in keyof typeof SCRIPTS]: StoreScript } = Object.fromEntries(
  Object.entries(SCRIPTS).map(([name, { lua }]) => [name, { name, lua }]),
) as { [K in keyof typeof SCRIPTS]: StoreScript };

/** The store's commands on whichever client it was given, or why that is no client it knows. */
function commandsFor(client: unknown): RedisCommands {
  if (client !== null && typeof client === 'object') {
    if (isIoredisLike(client)) return ioredisCommands(client);
    if (isNodeRedisLike(client)) return nodeRedisCommands(client);
    if (isUpstashLike(client)) return upstashCommands(client);
  }
  throw new TypeError(
    'RedisDedupeStore: options.client must be an ioredis Redis or Cluster, an iovalkey client, a node-redis client or cluster (redis), or an @upstash/redis client.',
  );
}

/** Redis wants whole milliseconds above zero for PX and PEXPIRE. */
const wholeMs = (ms: number): number => Math.max(1, Math.ceil(ms));

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** UTF-8 length, as Redis and Lua count it (no Buffer: the store also runs on edge runtimes). */
const byteLength = (text: string): number => (NON_ASCII.test(text) ? encoder.encode(text).length : text.length);

/** A stored value after its `L` or `C`: the token's byte length, `:`, the token, the fingerprint. */
const tokenAndFingerprint = (token: string, fingerprint: string): string =>
  `${byteLength(token)}:${token}${fingerprint}`;

const NON_ASCII = /[\u0080-\uffff]/;

/** One object for every successful claim: the answer carries nothing of its own. */
const CLAIMED: ClaimOutcome = Object.freeze({ state: 'claimed' });

/**
 * The fingerprint in a stored value (`L` or `C`, the token's byte length, `:`, the token, the fingerprint),
 * or `undefined` when the value is not one this store wrote. Lengths count bytes, as Lua's did; for the
 * usual all-ASCII value bytes and UTF-16 units agree and a slice does.
 */
function storedFingerprint(value: string): string | undefined {
  const kind = value.charCodeAt(0);
  if (kind !== 76 /* L */ && kind !== 67 /* C */) return undefined;
  const sep = value.indexOf(':', 1);
  const tokenBytes = sep > 1 ? Number(value.slice(1, sep)) : Number.NaN;
  if (!Number.isInteger(tokenBytes) || tokenBytes < 0) return undefined;
  if (!NON_ASCII.test(value))
    return value.length >= sep + 1 + tokenBytes ? value.slice(sep + 1 + tokenBytes) : undefined;
  const bytes = encoder.encode(value.slice(sep + 1));
  return bytes.length >= tokenBytes ? decoder.decode(bytes.subarray(tokenBytes)) : undefined;
}

/**
 * Whether a value the store found was written by `token` (its lease or its completed record): the kind,
 * then the token's byte length and the token, exactly as the value starts.
 */
function writtenBy(value: string, token: string): boolean {
  const kind = value.charCodeAt(0);
  const leaseOrRecord = kind === 76 /* L */ || kind === 67; /* C */
  return leaseOrRecord && value.startsWith(`${byteLength(token)}:${token}`, 1);
}

/** What Redis before 7.0 answers to `SET ... NX ... GET` (7.0 allowed NX and GET together); nothing ran. */
const isSyntaxError = (error: unknown): boolean => /^ERR syntax error/i.test((error as Error)?.message ?? '');

/**
 * A `DedupeStore` on Redis or Redis Cluster (ioredis): exactly-once handling across every instance of
 * the app that shares it.
 *
 * Each operation is one command on one key, so it is atomic, works on Cluster, and costs one round trip:
 * a first delivery pays two (claim: `SET NX PX GET`; complete: `SET PX GET`), a duplicate one, with no
 * script on either path. The lease is a TTL kept by Redis, and a token check fences off an attempt whose
 * lease ran out (release and extend are token-checked scripts, off the usual path).
 *
 * The store has no timer of its own: the pipeline bounds every call by its `storeTimeoutMs` (one owner for
 * one wait), and makes up for calls that land after it gave up (a late claim is released). The client
 * options (`failFastRedisOptions`) only make ioredis fail fast: no offline queue, no command replays.
 *
 * @example
 * ```ts
 * import { createWebhookHandler } from '@service-pay/core';
 * import { RedisDedupeStore, failFastRedisOptions } from '@service-pay/redis';
 * import { Redis } from 'ioredis';
 *
 * const client = new Redis(process.env.REDIS_URL!, failFastRedisOptions());
 * client.on('error', (err) => console.warn('redis:', err.message)); // outages answer 503; keep the process up
 * const handle = createWebhookHandler({ secret, store: new RedisDedupeStore({ client }), onPaymentPaid });
 * ```
 */
export class RedisDedupeStore implements DedupeStore {
  readonly kind = 'lease';
  /**
   * The operator's ledger of failing payments, beside the store's keys: `{<keyPrefix>ledger}:entries` and
   * `{<keyPrefix>ledger}:open` (one hash tag, one Cluster slot).
   */
  readonly ledger: RedisLedger;
  readonly #redis: RedisCommands;
  readonly #prefix: string;
  /** Whether the server takes `SET key value NX PX ms GET` (Redis >= 7); learnt from the first claim's answer. */
  #setNxGet = true;
  /** Whether the server takes `SET key value PX ms GET` (Redis >= 6.2); learnt from the first completion. */
  #setGet = true;

  constructor(options: RedisDedupeStoreOptions) {
    const redis = commandsFor(options?.client);
    if ((options as { commandTimeoutMs?: unknown }).commandTimeoutMs !== undefined) {
      throw new TypeError(
        "RedisDedupeStore: commandTimeoutMs is gone: the handler's storeTimeoutMs is the one bound on every store call.",
      );
    }
    const prefix = options.keyPrefix ?? 'service-pay:dedupe:';
    if (typeof prefix !== 'string') throw new TypeError('RedisDedupeStore: keyPrefix must be a string.');
    this.#redis = redis;
    this.#prefix = prefix;
    this.ledger = new RedisLedger(redis, prefix);
    noteLeaseStore();
  }

  /**
   * Takes the lease on `key` for `leaseMs`, or says who has it: `in-progress` with the time left on the
   * lease (from PTTL), or `completed`, each with the fingerprint stored by the first claim.
   *
   * @example
   * ```ts
   * const outcome = await store.claim('payment.paid:p_123', token, fingerprint, 10_000);
   * ```
   */
  async claim(key: string, token: string, fingerprint: string, leaseMs: number): Promise<ClaimOutcome> {
    const redisKey = this.#prefix + key;
    if (!this.#setNxGet) return this.#claimByScript(redisKey, token, fingerprint, leaseMs);
    // Claim-or-read in one plain command (Redis >= 7): it costs the server about a fifth of the Lua
    // claim's time (INFO commandstats: 2.5-3.5 us against 12.6-14.7 us a call), on every fresh delivery and
    // every duplicate; on duplicates the server does what a hand-rolled `SET NX GET` does. The value is
    // the lease exactly as the scripts of complete, release and extend read it.
    let previous: string | null;
    try {
      // The lease, as the Lua claim writes it.
      previous = await this.#redis.setNxPxGet(
        redisKey,
        `L${tokenAndFingerprint(token, fingerprint)}`,
        wholeMs(leaseMs),
      );
    } catch (error) {
      if (!isSyntaxError(error)) throw error;
      // Redis < 7 refuses NX with GET and ran nothing: this store uses the Lua claim from now on.
      this.#setNxGet = false;
      return this.#claimByScript(redisKey, token, fingerprint, leaseMs);
    }
    if (previous === null) return CLAIMED;
    const stored = storedFingerprint(previous);
    if (stored === undefined) throw new Error(`service-pay: ${redisKey} holds a value this store did not write`);
    if (previous.charCodeAt(0) === 67 /* C */) return { state: 'completed', fingerprint: stored };
    // In progress: one more round trip for the lease's time left (Retry-After), on this rare path only.
    // The key may have been completed or released since: at least 1 ms, at most the lease.
    const ttl = await this.#redis.pttl(redisKey);
    return { state: 'in-progress', fingerprint: stored, retryAfterMs: Math.min(wholeMs(leaseMs), Math.max(1, ttl)) };
  }

  async #claimByScript(redisKey: string, token: string, fingerprint: string, leaseMs: number): Promise<ClaimOutcome> {
    const reply = (await this.#redis.script(SCRIPT.servicePayDedupeClaim, redisKey, [
      token,
      fingerprint,
      wholeMs(leaseMs),
    ])) as ClaimReply;
    if (reply[0] === 0) return CLAIMED;
    if (reply[0] === 2) return { state: 'completed', fingerprint: String(reply[1]) };
    return { state: 'in-progress', fingerprint: String(reply[1]), retryAfterMs: Number(reply[2]) };
  }

  /**
   * Records the key as completed for `retainMs`, whatever it finds: the handler has run and
   * succeeded. `true` when this token held the lease, had completed the key already (a retried call), or the
   * key was gone (Redis restarted empty, the lease expired); `false` when another attempt held or completed
   * it, whose next `extend` then fails.
   *
   * @example
   * ```ts
   * const recorded = await store.complete('payment.paid:p_123', token, 7 * 24 * 3600_000, fingerprint);
   * ```
   */
  async complete(key: string, token: string, retainMs: number, fingerprint: string): Promise<boolean> {
    const redisKey = this.#prefix + key;
    const completed = `C${tokenAndFingerprint(token, fingerprint)}`;
    if (!this.#setGet) return this.#completeByScript(redisKey, token, retainMs, completed);
    // One plain command (Redis >= 6.2), the old value deciding the answer: no script on the path of a fresh
    // delivery. INFO commandstats on Redis 7.0: 2.1-2.4 us a call against 5.9-6.6 us for the script.
    let previous: string | null;
    try {
      previous = await this.#redis.setPxGet(redisKey, completed, wholeMs(retainMs));
    } catch (error) {
      if (!isSyntaxError(error)) throw error;
      // Redis < 6.2 has no SET ... GET and ran nothing: this store uses the script from now on.
      this.#setGet = false;
      return this.#completeByScript(redisKey, token, retainMs, completed);
    }
    return previous === null || writtenBy(previous, token);
  }

  async #completeByScript(redisKey: string, token: string, retainMs: number, completed: string): Promise<boolean> {
    const reply = await this.#redis.script(SCRIPT.servicePayDedupeComplete, redisKey, [
      token,
      wholeMs(retainMs),
      completed,
    ]);
    return Number(reply) === 1;
  }

  /**
   * Deletes the lease so a retry can claim it. `false` when `token` no longer holds it.
   *
   * @example
   * ```ts
   * await store.release('payment.paid:p_123', token);
   * ```
   */
  async release(key: string, token: string): Promise<boolean> {
    return Number(await this.#redis.script(SCRIPT.servicePayDedupeRelease, this.#prefix + key, [token])) === 1;
  }

  /**
   * Sets the lease's TTL to `leaseMs` from now. `false` when `token` no longer holds it (or the key is gone).
   *
   * @example
   * ```ts
   * const stillMine = await store.extend('payment.paid:p_123', token, 10_000);
   * ```
   */
  async extend(key: string, token: string, leaseMs: number): Promise<boolean> {
    return (
      Number(await this.#redis.script(SCRIPT.servicePayDedupeExtend, this.#prefix + key, [token, wholeMs(leaseMs)])) ===
      1
    );
  }
}
