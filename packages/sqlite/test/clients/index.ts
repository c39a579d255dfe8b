import { betterSqlite3 } from './better-sqlite3.js';
import type { SqliteClient } from './fixture.js';
import { kysely } from './kysely.js';
import { libsql } from './libsql.js';

export type { ClientFixture, SqliteClient } from './fixture.js';

/**
 * Every client of the app's that a SQLite store is offered on, one line each: the shared case lists (the
 * SQL stores' cases with core's conformance, the write guard, autoMigrate) loop over this list. A new
 * client is its file in this folder and one line here.
 */
export const SQLITE_CLIENTS: readonly SqliteClient[] = [betterSqlite3, libsql, kysely];
