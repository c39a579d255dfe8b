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
