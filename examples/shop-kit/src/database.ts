import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';

/**
 * A connection's or a transaction's query method, as the shop uses it. node-postgres' `Pool`, `PoolClient`
 * and PGlite's `Transaction` all fit, so the credit runs unchanged inside the store's transaction (`ctx.tx`).
 */
export interface Queryable {
  query(sql: string, params?: unknown[]): Promise<{ rows: unknown[] }>;
}

/** The driver under a `Database`: what `PostgresStore` is made on, so the store shares the shop's database. */
export type DatabaseConnection = { pool: pg.Pool } | { pglite: PGlite };

/** What the shop needs from a database: parameterised queries and transactions. */
export interface Database {
  query<Row = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<Row[]>;
  /** Runs `work` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T>;
  close(): Promise<void>;
  /** `pglite` (embedded, the default) or `postgres` (`DATABASE_URL`). */
  readonly kind: 'pglite' | 'postgres';
  readonly connection: DatabaseConnection;
}

/**
 * The embedded PGlite by default (no server, nothing downloaded at install), or PostgreSQL when a URL is
 * given. Both speak the same SQL, so the credit logic is one piece of code. Several app instances must share
 * a PostgreSQL: the record of what was credited is only shared if every instance writes to the same tables.
 *
 * Synchronous: both drivers connect on their first query. Next.js needs the store (made on this database)
 * before the shop has booted.
 */
export function openDatabase(url?: string): Database {
  return url ? openPostgres(url) : openPglite();
}

function openPglite(): Database {
  const db = new PGlite();
  // PGlite is one connection: serialise the shop's own transactions so one never interleaves with another.
  let queue: Promise<unknown> = Promise.resolve();
  return {
    kind: 'pglite',
    connection: { pglite: db },
    query: async (sql, params) => (await db.query(sql, params)).rows as never,
    transaction: (work) => {
      const run = queue.then(() => db.transaction((tx) => work(tx)));
      queue = run.catch(() => {});
      return run;
    },
    close: () => db.close(),
  };
}

function openPostgres(url: string): Database {
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  // An idle client whose connection fails (PostgreSQL restarted) emits 'error' on the pool; unheard, it would
  // crash the shop. Requests meanwhile fail on their own (503 from the webhook) and recover after the restart.
  pool.on('error', (error) => console.error(`[shop] PostgreSQL connection lost: ${error.message}`));
  return {
    kind: 'postgres',
    connection: { pool },
    query: async (sql, params) => (await pool.query(sql, params)).rows,
    transaction: async (work) => {
      const client = await pool.connect();
      try {
        await client.query('begin');
        const result = await work(client);
        await client.query('commit');
        return result;
      } catch (error) {
        await client.query('rollback').catch(() => {});
        throw error;
      } finally {
        client.release();
      }
    },
    close: () => pool.end(),
  };
}
