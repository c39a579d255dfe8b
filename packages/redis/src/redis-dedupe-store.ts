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
 *   commandTimeoutMs: 800,
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
  /** Longest wait for any one call before it rejects (the handler then answers 503). Default 1000 ms. */
  commandTimeoutMs?: number;
}

/**
 * Why a store call rejected when Redis did not answer in time. The handler answers 503
 * STORE_UNAVAILABLE, so the sender retries later; nothing was handled.
 *
 * @example
 * ```ts
 * try {
 *   await store.claim(key, token, fingerprint, 60_000);
 * } catch (error) {
 *   if (error instanceof RedisStoreTimeoutError) console.warn('Redis is slow or unreachable');
 * }
 * ```
 */
export class RedisStoreTimeoutError extends Error {
  override readonly name = 'RedisStoreTimeoutError';
}

/*
 * One Redis string per dedupe key, one of two shapes:
 *   lease:     'L' <byte length of token> ':' <token> <fingerprint>   with PX = the lease
 *   completed: 'C' <fingerprint>                                      with PX = retainMs
 * The length prefix makes "is this token the holder?" an exact prefix comparison whatever bytes the token
 * and fingerprint contain, and a single GET reads everything a claim needs. A string is also the smallest
 * thing Redis stores per key, which matters for a week of completed payments.
 *
 * Every script touches exactly the one key it is given in KEYS, so Redis Cluster routes it to the slot's
 * master; the lease is a server-side TTL, so no app clock is ever compared with another.
 */
const HOLDER = `local held = 'L' .. string.len(ARGV[1]) .. ':' .. ARGV[1]
local v = redis.call('GET', KEYS[1])
if not v or string.sub(v, 1, string.len(held)) ~= held then return 0 end
`;

const SCRIPTS = {
  // ARGV: token, fingerprint, leaseMs. Replies {0} claimed, {1, fingerprint, pttl} in progress, {2, fingerprint} completed.
  servicePayDedupeClaim: {
    numberOfKeys: 1,
    lua: `local v = redis.call('GET', KEYS[1])
if not v then
  redis.call('SET', KEYS[1], 'L' .. string.len(ARGV[1]) .. ':' .. ARGV[1] .. ARGV[2], 'PX', ARGV[3])
  return {0}
end
local kind = string.sub(v, 1, 1)
if kind == 'C' then return {2, string.sub(v, 2)} end
local sep = kind == 'L' and string.find(v, ':', 2, true)
if not sep then return redis.error_reply('service-pay: ' .. KEYS[1] .. ' holds a value this store did not write') end
local ttl = redis.call('PTTL', KEYS[1])
-- Time is frozen while a script runs, so the key cannot expire under us; 1 keeps Retry-After positive.
if ttl < 1 then ttl = 1 end
return {1, string.sub(v, sep + 1 + tonumber(string.sub(v, 2, sep - 1))), ttl}`,
  },
  // ARGV: token, retainMs. The fingerprint is kept; the token goes, so no late caller can touch the record.
  servicePayDedupeComplete: {
    numberOfKeys: 1,
    lua: `${HOLDER}redis.call('SET', KEYS[1], 'C' .. string.sub(v, string.len(held) + 1), 'PX', ARGV[2])
return 1`,
  },
  // ARGV: token.
  servicePayDedupeRelease: {
    numberOfKeys: 1,
    lua: `${HOLDER}redis.call('DEL', KEYS[1])
return 1`,
  },
  // ARGV: token, leaseMs.
  servicePayDedupeExtend: {
    numberOfKeys: 1,
    lua: `${HOLDER}redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`,
  },
} satisfies Record<string, { numberOfKeys: number; lua: string }>;

type ClaimReply = [0] | [1, string, number] | [2, string];

/** The client once `SCRIPTS` are defined on it: ioredis adds one method per script. */
interface ScriptedClient {
  servicePayDedupeClaim(key: string, token: string, fingerprint: string, leaseMs: number): Promise<ClaimReply>;
  servicePayDedupeComplete(key: string, token: string, retainMs: number): Promise<0 | 1>;
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

/**
 * A `DedupeStore` on Redis or Redis Cluster (ioredis): exactly-once handling across every instance of
 * the app that shares it.
 *
 * Each operation is one Lua script on one key, so it is atomic, works on Cluster, and costs one round
 * trip: a first delivery pays two (claim, complete), a duplicate one. The lease is a TTL kept by Redis,
 * and a token check fences off a delivery whose lease ran out.
 *
 * Outages fail closed and fast: every call rejects within `commandTimeoutMs` (default 1 s) whatever the
 * client is doing (queueing, reconnecting, waiting on a dead socket), and the handler answers 503 so the
 * sender retries. Nothing is handled without a claim.
 *
 * @example
 * ```ts
 * import { createWebhookHandler } from '@service-pay/core';
 * import { RedisDedupeStore, failFastRedisOptions } from '@service-pay/redis';
 * import { Redis } from 'ioredis';
 *
 * const store = new RedisDedupeStore({ client: new Redis(process.env.REDIS_URL!, failFastRedisOptions()) });
 * const handle = createWebhookHandler({ secret, store, onPaymentPaid });
 * ```
 */
export class RedisDedupeStore implements DedupeStore {
  readonly #client: ScriptedClient;
  readonly #prefix: string;
  readonly #timeoutMs: number;

  constructor(options: RedisDedupeStoreOptions) {
    const client = options?.client as (Redis | Cluster) | undefined;
    if (typeof client?.defineCommand !== 'function') {
      throw new TypeError('RedisDedupeStore: options.client must be an ioredis Redis or Cluster.');
    }
    const timeoutMs = options.commandTimeoutMs ?? 1_000;
    if (!(Number.isFinite(timeoutMs) && timeoutMs > 0)) {
      throw new RangeError('RedisDedupeStore: commandTimeoutMs must be a positive number of milliseconds.');
    }
    const prefix = options.keyPrefix ?? 'service-pay:dedupe:';
    if (typeof prefix !== 'string') throw new TypeError('RedisDedupeStore: keyPrefix must be a string.');
    this.#client = defineScripts(client);
    this.#prefix = prefix;
    this.#timeoutMs = timeoutMs;
  }

  /**
   * Takes the lease on `key` for `leaseMs`, or says who has it: `in-progress` with the time left on the
   * lease (from PTTL), or `completed`, each with the fingerprint stored by the first claim.
   *
   * @example
   * ```ts
   * const outcome = await store.claim('payment.paid:p_123', crypto.randomUUID(), fingerprint, 60_000);
   * ```
   */
  async claim(key: string, token: string, fingerprint: string, leaseMs: number): Promise<ClaimOutcome> {
    const redisKey = this.#prefix + key;
    let reply: ClaimReply;
    try {
      reply = await this.#bounded(
        'claim',
        this.#client.servicePayDedupeClaim(redisKey, token, fingerprint, wholeMs(leaseMs)),
      );
    } catch (error) {
      // The claim may still reach Redis after we gave up on it (slow server, paused client, a command
      // already on the wire). Nobody will run the handler for that claim, so free it, fenced by our own
      // token; on the same connection the release is queued behind the claim and runs after it. Without
      // this, the sender's retry would meet 409 until the lease ran out.
      this.#client.servicePayDedupeRelease(redisKey, token).catch(() => {});
      throw error;
    }
    if (reply[0] === 0) return { state: 'claimed' };
    if (reply[0] === 2) return { state: 'completed', fingerprint: String(reply[1]) };
    return { state: 'in-progress', fingerprint: String(reply[1]), retryAfterMs: Number(reply[2]) };
  }

  /**
   * Turns the lease into a completed record kept for `retainMs`. `false` when `token` lost the lease.
   *
   * @example
   * ```ts
   * const recorded = await store.complete('payment.paid:p_123', token, 7 * 24 * 3600_000);
   * ```
   */
  async complete(key: string, token: string, retainMs: number): Promise<boolean> {
    return (
      (await this.#bounded(
        'complete',
        this.#client.servicePayDedupeComplete(this.#prefix + key, token, wholeMs(retainMs)),
      )) === 1
    );
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
    return (await this.#bounded('release', this.#client.servicePayDedupeRelease(this.#prefix + key, token))) === 1;
  }

  /**
   * Sets the lease's TTL to `leaseMs` from now. `false` when `token` no longer holds it.
   *
   * @example
   * ```ts
   * const stillMine = await store.extend('payment.paid:p_123', token, 60_000);
   * ```
   */
  async extend(key: string, token: string, leaseMs: number): Promise<boolean> {
    return (
      (await this.#bounded(
        'extend',
        this.#client.servicePayDedupeExtend(this.#prefix + key, token, wholeMs(leaseMs)),
      )) === 1
    );
  }

  // Our own timer, not only the client's options: whatever ioredis does with a command (offline queue,
  // reconnect loop, Cluster redirections, a dead socket), the caller hears back within the bound. The
  // reply may still settle later; it is observed here, so a late rejection never goes unhandled.
  #bounded<T>(what: string, reply: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new RedisStoreTimeoutError(`Redis did not answer ${what} within ${this.#timeoutMs} ms`)),
        this.#timeoutMs,
      );
      reply.then(
        (value) => {
          clearTimeout(timer);
          resolve(value);
        },
        (error: unknown) => {
          clearTimeout(timer);
          reject(error);
        },
      );
    });
  }
}
