import { StoreTimeoutError } from './store-call.js';

/**
 * A store's connection pool as it is at one moment, from the pool's public counters: how many connections
 * it may open (`size`), how many are checked out (`inUse`), and how many callers wait for one (`waiting`).
 *
 * @example
 * ```ts
 * const state: StorePoolState = { size: pool.options.max, inUse: pool.totalCount - pool.idleCount, waiting: pool.waitingCount };
 * ```
 */
export interface StorePoolState {
  readonly size: number;
  readonly inUse: number;
  readonly waiting: number;
}

/**
 * A store call given up at `storeTimeoutMs` while the store's connection pool was full: every connection
 * checked out and callers waiting for one. The database may be fine; the pool is too small for the
 * deliveries (and other work) that share it, or something holds its connections. Its `cause` is the
 * `StoreTimeoutError` it explains.
 *
 * @example
 * ```ts
 * if (error instanceof StorePoolFullError) console.warn(`pool of ${error.pool.size} full, ${error.pool.waiting} waiting`);
 * ```
 */
export class StorePoolFullError extends Error {
  override readonly name = 'StorePoolFullError';
  /** Stable code for logs and tests (the delivery itself is answered `STORE_UNAVAILABLE`, 503). */
  readonly code = 'STORE_POOL_FULL';

  constructor(
    readonly pool: StorePoolState,
    timeout: StoreTimeoutError,
  ) {
    super(
      `The store's connection pool is full: ${timeout.message.replace(/\.$/, '').replace(/^The /, 'the ')}, waiting for a connection ` +
        `(pool size ${pool.size}, ${pool.inUse} in use, ${pool.waiting} waiting).`,
      { cause: timeout },
    );
  }
}

/**
 * A store timeout as what it was, asked only once a call has timed out: a `StorePoolFullError` when the
 * store describes its pool (`describePool`) and that pool is full, else `error` unchanged. A store that
 * cannot tell, or whose `describePool` throws, leaves the timeout as it is.
 *
 * @example
 * ```ts
 * return conclusion.concluded({ outcome: 'unavailable', error: explainStoreTimeout(error, store) }, input);
 * ```
 */
export function explainStoreTimeout(error: unknown, store: { describePool?(): StorePoolState | undefined }): unknown {
  if (!(error instanceof StoreTimeoutError) || typeof store.describePool !== 'function') return error;
  let pool: StorePoolState | undefined;
  try {
    pool = store.describePool();
  } catch {
    return error;
  }
  // Waiting callers mean this call was one of them; every connection in use and nobody waiting does not.
  if (pool === undefined || !(pool.waiting > 0)) return error;
  return new StorePoolFullError(pool, error);
}
