import pg from 'pg';

/** The machine's PostgreSQL (trust auth on 127.0.0.1), database `test`, unless DATABASE_URL says otherwise. */
export const POSTGRES_URL = process.env.CHAOS_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

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
