import { PGlite } from '@electric-sql/pglite';
import { drizzle as onNodePostgres } from 'drizzle-orm/node-postgres';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { drizzle as onPglite } from 'drizzle-orm/pglite';
import pg from 'pg';

/** The shop's Drizzle database, whichever driver is under it. */
export type ShopDb = PgDatabase<PgQueryResultHKT>;

/** A Drizzle database and how to close what it runs on. */
export interface OpenedDatabase {
  db: ShopDb;
  /** `pglite` (embedded, the default) or `postgres` (`DATABASE_URL`). */
  kind: 'pglite' | 'postgres';
  close(): Promise<void>;
}

/**
 * Drizzle on an embedded PGlite by default (no server: `pnpm start` needs nothing but Node), or on a
 * node-postgres pool when a URL is given (what several instances of the shop share). The shop's code is the
 * same on both: it only sees Drizzle.
 */
export function openDatabase(url?: string): OpenedDatabase {
  if (url === undefined) {
    const pglite = new PGlite();
    return { db: onPglite(pglite), kind: 'pglite', close: () => pglite.close() };
  }
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  // An idle connection that fails (PostgreSQL restarted) must not crash the shop: requests meanwhile fail
  // on their own (503 from the webhook) and recover after the restart.
  pool.on('error', (error) => console.error(`[shop] PostgreSQL connection lost: ${error.message}`));
  return { db: onNodePostgres(pool), kind: 'postgres', close: () => pool.end() };
}
