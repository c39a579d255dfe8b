import { drizzle } from './drizzle.js';
import type { MysqlClient } from './fixture.js';
import { knex } from './knex.js';
import { kysely } from './kysely.js';
import { mysql2 } from './mysql2.js';
import { prisma } from './prisma.js';
import { typeOrm } from './typeorm.js';

export type { AppClient, ClientFixture, GatedStore, MysqlClient, PoolToFill } from './fixture.js';

/**
 * Every client of the app's that a MySQL/MariaDB store is offered on, one line each: the shared case lists
 * (the SQL stores' cases with core's conformance, the write guard, round trips, autoMigrate) loop over this
 * list. A new client is its file in this folder and one line here.
 */
export const MYSQL_CLIENTS: readonly MysqlClient[] = [mysql2, kysely, drizzle, knex, typeOrm, prisma];
