import type { StorePoolState } from '@service-pay/core';
import type { Pool } from 'pg';

const listening = new WeakSet<object>();

/**
 * Keeps a pool's `error` events from crashing the process. node-postgres emits `error` on the pool when an
 * idle client's connection fails (the server restarted, a proxy cut it); an EventEmitter with no listener
 * throws it, and the app dies on the next PostgreSQL restart. The store depends on that pool surviving (it
 * answers 503 meanwhile and recovers by itself: node-postgres already dropped the failed client), so it
 * listens. When the app has no listener of its own, the first such error is said once on the console, with
 * how to log them yourself; with one, the app decides what to log and the store says nothing.
 */
export function keepPoolErrorsFromCrashing(pool: Pool): void {
  if (listening.has(pool)) return;
  listening.add(pool);
  let warned = false;
  pool.on('error', (error: Error) => {
    if (warned || pool.listenerCount('error') > 1) return;
    warned = true;
    console.warn(
      `PostgresStore: an idle connection of the pool failed (${error.message}); deliveries are answered 503 until ` +
        "PostgreSQL is back. Attach pool.on('error', ...) to log these yourself.",
    );
  });
}

const guardedClients = new WeakSet<object>();
/** Pools with our `acquire` listener: one per pool, however many stores share it. */
const guardedPools = new WeakSet<object>();
const ignoreError = () => {};

/**
 * What a pool looks like to `keepCheckedOutClientsFromCrashing`: node-postgres' `Pool` (and its events).
 */
interface PoolEvents {
  on(event: 'acquire', listener: (client: { on(event: 'error', listener: () => void): unknown }) => void): unknown;
}

/**
 * Keeps a checked-out client's `error` event from crashing the process, for pools the store does not check
 * clients out of itself (Drizzle on node-postgres). node-postgres takes its own listener off a client while
 * it is checked out, so a connection that drops then (PostgreSQL restarted, a backend ended) throws from an
 * EventEmitter with no listener. The query in flight fails by itself, which is how the store and the app
 * learn of it. Uses the pool's public `acquire` event: one listener per pool, once per client.
 */
export function keepCheckedOutClientsFromCrashing(pool: Pool): void {
  keepPoolErrorsFromCrashing(pool);
  if (guardedPools.has(pool)) return;
  guardedPools.add(pool);
  (pool as unknown as PoolEvents).on('acquire', (client) => {
    if (guardedClients.has(client)) return;
    guardedClients.add(client);
    client.on('error', ignoreError);
  });
}

/** Whether `value` is a node-postgres `Pool` (by shape: the store never asks what class a client is). */
export function isPgPool(value: unknown): value is Pool {
  const pool = value as Partial<Pool> | null;
  return (
    typeof pool === 'object' &&
    pool !== null &&
    typeof pool.connect === 'function' &&
    typeof pool.on === 'function' &&
    typeof pool.totalCount === 'number'
  );
}

/**
 * A node-postgres pool's state from its public counters (`options.max`, `totalCount`, `idleCount`,
 * `waitingCount`), for the log line of a `begin` that timed out: a full pool is not a database that does not
 * answer. `undefined` for anything that does not have them.
 *
 * @example
 * ```ts
 * describePgPool(pool); // { size: 10, inUse: 10, waiting: 3 }
 * ```
 */
export function describePgPool(pool: unknown): StorePoolState | undefined {
  const p = pool as Partial<Pick<Pool, 'totalCount' | 'idleCount' | 'waitingCount'>> & { options?: { max?: unknown } };
  if (typeof p?.totalCount !== 'number' || typeof p.idleCount !== 'number' || typeof p.waitingCount !== 'number') {
    return undefined;
  }
  // node-postgres opens up to 10 connections unless told otherwise.
  const size = typeof p.options?.max === 'number' ? p.options.max : 10;
  return { size, inUse: p.totalCount - p.idleCount, waiting: p.waitingCount };
}
