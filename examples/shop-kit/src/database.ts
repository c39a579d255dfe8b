import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';

/** What the shop needs from a database: parameterised queries and transactions. */
export interface Database {
  query<Row = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<Row[]>;
  /** Runs `work` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(work: (tx: Pick<Database, 'query'>) => Promise<T>): Promise<T>;
  close(): Promise<void>;
  /** `pglite` (embedded, the default) or `postgres` (`DATABASE_URL`). */
  readonly kind: 'pglite' | 'postgres';
}

/**
 * The embedded PGlite by default (no server, nothing downloaded at install), or PostgreSQL when a URL is
 * given. Both speak the same SQL, so the credit logic is one piece of code. Several app instances must share
 * a PostgreSQL: the unique paymentId is the last guard only if every instance writes to the same table.
 */
export async function openDatabase(url?: string): Promise<Database> {
  return url ? openPostgres(url) : openPglite();
}

async function openPglite(): Promise<Database> {
  const db = new PGlite();
  await db.waitReady;
  // PGlite is one connection: serialise transactions so one never interleaves with another.
  let queue: Promise<unknown> = Promise.resolve();
  return {
    kind: 'pglite',
    query: async (sql, params) => (await db.query(sql, params)).rows as never,
    transaction: (work) => {
      const run = queue.then(() =>
        db.transaction((tx) => work({ query: async (sql, params) => (await tx.query(sql, params)).rows as never })),
      );
      queue = run.catch(() => {});
      return run;
    },
    close: () => db.close(),
  };
}

async function openPostgres(url: string): Promise<Database> {
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  await pool.query('select 1');
  return {
    kind: 'postgres',
    query: async (sql, params) => (await pool.query(sql, params)).rows,
    transaction: async (work) => {
      const client = await pool.connect();
      try {
        await client.query('begin');
        const result = await work({ query: async (sql, params) => (await client.query(sql, params)).rows });
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
