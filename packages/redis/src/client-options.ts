import { MAX_TIMER_MS, timerMs } from '@service-pay/core';
import type { ClusterOptions, RedisOptions } from 'ioredis';

/**
 * Input of `failFastRedisOptions` and `failFastClusterOptions`.
 *
 * @example
 * ```ts
 * const input: FailFastOptions = { timeoutMs: 800 };
 * ```
 */
export interface FailFastOptions {
  /**
   * The scale of the client's own connection timers (not a command timeout: the handler's
   * `storeTimeoutMs` bounds every store call): a socket silent for 5x this with replies pending is dead,
   * and a connect attempt gives up after 2x. Default 1000 ms.
   */
  timeoutMs?: number;
}

/**
 * ioredis options for a client that serves a `RedisDedupeStore`: during an outage every command fails at
 * once instead of waiting, and nothing is replayed later. They set no command timeout: the pipeline's
 * `storeTimeoutMs` is the one bound on a store call, and a second timer per call only costs time.
 *
 * Why each one:
 * - `enableOfflineQueue: false`: while disconnected, reject now. A queued claim would otherwise run on
 *   reconnect, long after the webhook was answered 503, and hold the lease against the sender's retry.
 * - `maxRetriesPerRequest: 0`: when the connection drops, reject the commands in flight at once rather
 *   than keep them across reconnect attempts (the default waits for 20).
 * - `autoResendUnfulfilledCommands: false`: never replay an in-flight command on a new connection.
 * - `socketTimeout`: a socket that got no reply for several bounds is dead (host gone, no RST): drop it
 *   and reconnect, instead of timing out every command on it forever.
 * - `connectTimeout` and `retryStrategy`: keep trying to reconnect, at least once a second, so service
 *   resumes within about a second of Redis coming back.
 *
 * Spread your own settings (host, password, tls) alongside. Other code sharing the client gets the same
 * behaviour; if it wants queueing, give it its own client.
 *
 * @example
 * ```ts
 * import { Redis } from 'ioredis';
 * import { RedisDedupeStore, failFastRedisOptions } from '@service-pay/redis';
 *
 * const client = new Redis(process.env.REDIS_URL!, failFastRedisOptions());
 * client.on('error', (err) => console.warn('redis:', err.message)); // without a listener, errors crash the process
 * await new Promise((resolve) => client.once('ready', resolve)); // no offline queue: wait before taking traffic
 * const store = new RedisDedupeStore({ client });
 * ```
 */
export function failFastRedisOptions(input: FailFastOptions = {}) {
  const timeoutMs = boundOf(input);
  return {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    // Multiples of a bound that may itself be near the timer's maximum: held there (a socket timer past it
    // would fire at once), which is "never" for a socket timeout.
    socketTimeout: Math.min(MAX_TIMER_MS, Math.max(5 * timeoutMs, 5_000)),
    connectTimeout: Math.min(MAX_TIMER_MS, Math.max(2 * timeoutMs, 2_000)),
    retryStrategy: (times) => Math.min(times * 100, 1_000),
    // `satisfies`, not a return type: the exact shape is what lets `new Redis(url, failFastRedisOptions())`
    // compile under exactOptionalPropertyTypes, where ioredis 6's own RedisOptions type does not.
  } satisfies RedisOptions;
}

/**
 * ioredis `Cluster` options for a client that serves a `RedisDedupeStore`; the Cluster counterpart of
 * `failFastRedisOptions`.
 *
 * - `enableOfflineQueue: false`: before the cluster is ready (start-up, topology lost), reject now.
 * - `redisOptions`: per-node connections get the same no-replay settings as a single client.
 *   (ioredis forces each node's own offline queue on, so it can send before a node is connected; the
 *   pipeline's `storeTimeoutMs` and `maxRetriesPerRequest: 0` bound that.)
 * - `retryDelayOnFailover`, `retryDelayOnClusterDown`, `retryDelayOnTryAgain` and `maxRedirections`:
 *   Cluster re-sends a command while a failover settles. Kept short so those retries fit inside the
 *   pipeline's bound; past it the handler has answered 503, and a late claim is released behind it.
 * - `clusterRetryStrategy`: reconnect to the cluster at least once a second.
 *
 * @example
 * ```ts
 * import { Cluster } from 'ioredis';
 * import { RedisDedupeStore, failFastClusterOptions } from '@service-pay/redis';
 *
 * const client = new Cluster([{ host: 'redis-0', port: 6379 }], failFastClusterOptions());
 * const store = new RedisDedupeStore({ client });
 * ```
 */
export function failFastClusterOptions(input: FailFastOptions = {}) {
  const timeoutMs = boundOf(input);
  const { enableOfflineQueue, retryStrategy, ...nodeOptions } = failFastRedisOptions(input);
  return {
    enableOfflineQueue,
    retryDelayOnFailover: 100,
    retryDelayOnClusterDown: 100,
    retryDelayOnTryAgain: 100,
    maxRedirections: Math.max(4, Math.ceil(timeoutMs / 100)),
    slotsRefreshTimeout: timeoutMs,
    clusterRetryStrategy: (times) => Math.min(100 + times * 100, 1_000),
    redisOptions: nodeOptions,
  } satisfies ClusterOptions;
}

function boundOf(input: FailFastOptions): number {
  return timerMs(input?.timeoutMs, 1_000, 'failFast options: timeoutMs', {
    error: (message) => new RangeError(message),
  });
}
