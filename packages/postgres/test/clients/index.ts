import type { PostgresClient } from './fixture.js';
import { nodePostgres } from './node-postgres.js';
import { drizzleNodePostgres, drizzlePostgresJs, knex, kysely, prisma, typeOrm } from './orms.js';
import { pgPromiseClient } from './pg-promise.js';
import { pglite } from './pglite.js';
import { postgresJs } from './postgres-js.js';

export type { AppClient, ClientFixture, GatedStore, PoolToFill, PostgresClient } from './fixture.js';

/**
 * Every client of the app's that a PostgreSQL store is offered on, one line each: every shared case list
 * (conformance, the write guard, round trips, autoMigrate, the handler tests, the fault rows) loops over
 * this list. A new client is its file in this folder and one line here.
 */
export const POSTGRES_CLIENTS: readonly PostgresClient[] = [
  nodePostgres,
  pglite,
  postgresJs,
  kysely,
  drizzleNodePostgres,
  drizzlePostgresJs,
  knex,
  typeOrm,
  prisma,
  pgPromiseClient,
];

/** The clients that speak to a server over the wire (not PGlite, inside the process). */
export const SERVER_CLIENTS: readonly PostgresClient[] = POSTGRES_CLIENTS.filter((c) => c.oneConnection !== true);
