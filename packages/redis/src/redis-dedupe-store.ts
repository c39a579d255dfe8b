import type { ClaimOutcome, DedupeStore } from '@service-pay/core';
import type { Cluster, Redis } from 'ioredis';

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
   * An ioredis `Redis` or `Cluster`. Give the store its own client built with `failFastRedisOptions()` /
   * `failFastClusterOptions()`: those options are what keeps an outage from queueing claims that run later.
   */
  client: Redis | Cluster;
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
    numberOfKeys: 1,
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
  // ARGV: token, retainMs, the lease value this token's claim wrote, the completed value (both carry the
  // fingerprint).
  // Completes the lease this token holds, records a key that is gone (the store lost it: the handler has
  // run, and a record beats none), and answers 1 again for the token that already completed it. 0 only
  // when another token holds or completed the key.
  servicePayDedupeComplete: {
    numberOfKeys: 1,
    // The usual case first: the key holds exactly the lease this token wrote, and one string compare with
    // values built by the client settles it. No string is built in Lua on that path: it saves about 4 us of
    // the server's time on every completion (measured on Redis 7.0, 74.5 -> 70.1 us a sequential call).
    lua: `local v = redis.call('GET', KEYS[1])
if v == ARGV[3] or not v then
  redis.call('SET', KEYS[1], ARGV[4], 'PX', ARGV[2])
  return 1
end
${TOKEN_VALUES}if string.sub(v, 1, string.len(held)) == held then
  redis.call('SET', KEYS[1], done .. string.sub(v, string.len(held) + 1), 'PX', ARGV[2])
  return 1
end
if string.sub(v, 1, string.len(done)) == done then return 1 end
return 0`,
  },
  // ARGV: token.
  servicePayDedupeRelease: {
    numberOfKeys: 1,
    lua: `${TOKEN_PREFIXES}if not (${HOLDS}) then return 0 end
redis.call('DEL', KEYS[1])
return 1`,
  },
  // ARGV: token, leaseMs.
  servicePayDedupeExtend: {
    numberOfKeys: 1,
    lua: `${TOKEN_PREFIXES}if not (${HOLDS}) then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`,
  },
} satisfies Record<string, { numberOfKeys: number; lua: string }>;

type ClaimReply = [0] | [1, string, number] | [2, string];

/** The client once `SCRIPTS` are defined on it: ioredis adds one method per script. */
interface ScriptedClient {
  servicePayDedupeClaim(key: string, token: string, fingerprint: string, leaseMs: number): Promise<ClaimReply>;
  servicePayDedupeComplete(
    key: string,
    token: string,
    retainMs: number,
    leaseValue: string,
    completedValue: string,
  ): Promise<0 | 1>;
  servicePayDedupeRelease(key: string, token: string): Promise<0 | 1>;
  servicePayDedupeExtend(key: string, token: string, leaseMs: number): Promise<0 | 1>;
}

// Once per client, however many stores share it: ioredis then sends each script's body once per
// connection (EVAL) and only its SHA afterwards (EVALSHA), so every call is one round trip.
const scripted = new WeakSet<object>();

function defineScripts(client: Redis | Cluster): ScriptedClient {
  if (!scripted.has(client)) {
    for (const [name, definition] of Object.entries(SCRIPTS)) client.defineCommand(name, definition);
    scripted.add(client);
  }
  return client as unknown as ScriptedClient;
}

/** Redis wants whole milliseconds above zero for PX and PEXPIRE. */
const wholeMs = (ms: number): number => Math.max(1, Math.ceil(ms));

/** A stored value after its `L` or `C`: the token's byte length, `:`, the token, the fingerprint. */
const tokenAndFingerprint = (token: string, fingerprint: string): string =>
  `${Buffer.byteLength(token)}:${token}${fingerprint}`;

/** One object for every successful claim: the answer carries nothing of its own. */
const CLAIMED: ClaimOutcome = Object.freeze({ state: 'claimed' });

const NON_ASCII = /[\u0080-\uffff]/;

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
  const bytes = Buffer.from(value.slice(sep + 1));
  return bytes.length >= tokenBytes ? bytes.subarray(tokenBytes).toString() : undefined;
}

/** What Redis before 7.0 answers to `SET ... NX ... GET` (7.0 allowed NX and GET together); nothing ran. */
const isSyntaxError = (error: unknown): boolean => /^ERR syntax error/i.test((error as Error)?.message ?? '');

/**
 * A `DedupeStore` on Redis or Redis Cluster (ioredis): exactly-once handling across every instance of
 * the app that shares it.
 *
 * Each operation is one Lua script on one key, so it is atomic, works on Cluster, and costs one round
 * trip: a first delivery pays two (claim, complete), a duplicate one. The lease is a TTL kept by Redis,
 * and a token check fences off an attempt whose lease ran out.
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
  readonly #client: ScriptedClient;
  readonly #redis: Redis | Cluster;
  readonly #prefix: string;
  /** Whether the server takes `SET key value NX PX ms GET` (Redis >= 7); learnt from the first claim's answer. */
  #setNxGet = true;

  constructor(options: RedisDedupeStoreOptions) {
    const client = options?.client as (Redis | Cluster) | undefined;
    if (typeof client?.defineCommand !== 'function') {
      throw new TypeError('RedisDedupeStore: options.client must be an ioredis Redis or Cluster.');
    }
    if ((options as { commandTimeoutMs?: unknown }).commandTimeoutMs !== undefined) {
      throw new TypeError(
        "RedisDedupeStore: commandTimeoutMs is gone: the handler's storeTimeoutMs is the one bound on every store call.",
      );
    }
    const prefix = options.keyPrefix ?? 'service-pay:dedupe:';
    if (typeof prefix !== 'string') throw new TypeError('RedisDedupeStore: keyPrefix must be a string.');
    this.#client = defineScripts(client);
    this.#redis = client;
    this.#prefix = prefix;
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
    // every duplicate; on duplicates the server now does what a hand-rolled `SET NX GET` does. The value is
    // the lease exactly as the scripts of complete, release and extend read it.
    let previous: string | null;
    try {
      previous = await this.#redis.set(
        redisKey,
        `L${tokenAndFingerprint(token, fingerprint)}`, // the lease, as the Lua claim writes it
        'PX',
        wholeMs(leaseMs),
        'NX',
        'GET',
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
    const reply = await this.#client.servicePayDedupeClaim(redisKey, token, fingerprint, wholeMs(leaseMs));
    if (reply[0] === 0) return CLAIMED;
    if (reply[0] === 2) return { state: 'completed', fingerprint: String(reply[1]) };
    return { state: 'in-progress', fingerprint: String(reply[1]), retryAfterMs: Number(reply[2]) };
  }

  /**
   * Turns the lease into a completed record kept for `retainMs`; records a key Redis lost (restarted
   * empty, expired) as completed too. `false` only when another attempt holds or completed the key.
   *
   * @example
   * ```ts
   * const recorded = await store.complete('payment.paid:p_123', token, 7 * 24 * 3600_000, fingerprint);
   * ```
   */
  async complete(key: string, token: string, retainMs: number, fingerprint: string): Promise<boolean> {
    const held = tokenAndFingerprint(token, fingerprint);
    const reply = await this.#client.servicePayDedupeComplete(
      this.#prefix + key,
      token,
      wholeMs(retainMs),
      `L${held}`,
      `C${held}`,
    );
    return reply === 1;
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
    return (await this.#client.servicePayDedupeRelease(this.#prefix + key, token)) === 1;
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
    return (await this.#client.servicePayDedupeExtend(this.#prefix + key, token, wholeMs(leaseMs))) === 1;
  }
}
