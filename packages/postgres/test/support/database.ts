import { PGlite } from '@electric-sql/pglite';
import { testServers } from '@service-pay/test-kit';
import pg from 'pg';

/** The machine's PostgreSQL (trust auth on loopback, database `test`; `.ci/run` makes sure it is up). */
/** The shared PostgreSQL (`TEST_POSTGRES_URL`; test-kit's `testServers`). */
export const DATABASE_URL = testServers().postgresUrl;

/** A table name no other test (or other run on the shared server) uses. */
export function uniqueName(label: string): string {
  return `t_${label}_${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;
}

/** A pool on the shared server that says where it tried when the server is not there. */
export async function openPool(options: pg.PoolConfig = {}): Promise<pg.Pool> {
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 25, ...options });
  pool.on('error', () => {}); // idle clients of a terminated backend; the tests look at query results
  try {
    await pool.query('select 1');
  } catch (error) {
    await pool.end();
    throw new Error(`These tests need PostgreSQL at ${DATABASE_URL} (.ci/run starts it): ${(error as Error).message}`);
  }
  return pool;
}

/** An in-memory PGlite. */
export function openPGlite(): Promise<PGlite> {
  return PGlite.create();
}
