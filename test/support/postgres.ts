import { testServers } from '@service-pay/test-kit';
import pg from 'pg';

/** The shared PostgreSQL (`TEST_POSTGRES_URL`; test-kit's `testServers`). */
export const POSTGRES_URL = testServers().postgresUrl;

export async function connectPostgres(): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  try {
    await client.connect();
  } catch (error) {
    throw new Error(
      `The chaos suite needs PostgreSQL at ${POSTGRES_URL} (.ci/run starts it): ${(error as Error).message}`,
    );
  }
  return client;
}

/** Drops the tables a run created under `prefix`. */
export async function dropTables(client: pg.Client, prefix: string): Promise<void> {
  await client.query(`drop table if exists ${prefix}credits`);
  await client.query(`drop table if exists ${prefix}orders`);
}
