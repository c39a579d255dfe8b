import type { TransactionClaim } from '@service-pay/core';
import { type AutoMigrateOption, type SqlClient, SqlStore, type SqlStoreApi } from '@service-pay/sql';
import { sqliteDialect } from '@service-pay/sql/sqlite';
import type { Database } from 'better-sqlite3';
import { betterSqlite3Client } from './clients/better-sqlite3.js';

/**
 * Options every client shares.
 *
 * @example
 * ```ts
 * const common: SqliteStoreCommonOptions = { tableName: 'service_pay_inbox' };
 * ```
 */
export interface SqliteStoreCommonOptions extends AutoMigrateOption {
  /**
   * The inbox table, `name` or `schema.name` of an attached database (plain identifiers, used exactly as
   * given: they are quoted). Default `service_pay_inbox`.
   */
  tableName?: string;
}

/**
 * What the store uses of a synchronous SQLite connection with better-sqlite3's API: better-sqlite3's
 * `Database`, and libsql's (the `libsql` package, which implements the same API on local files).
 *
 * @example
 * ```ts
 * import Database from 'libsql';
 * const database: SqliteDatabaseLike = new Database('shop.db');
 * ```
 */
export interface SqliteDatabaseLike {
  prepare(source: string): unknown;
  exec(source: string): unknown;
  pragma(source: string, options?: { simple?: boolean }): unknown;
  readonly inTransaction: boolean;
  readonly readonly: boolean;
}

/**
 * A store on a better-sqlite3 `Database` (or libsql's, the same API): `ctx.tx` is that connection, inside
 * the delivery's transaction.
 *
 * @example
 * ```ts
 * import Database from 'better-sqlite3';
 * const options: BetterSqlite3StoreOptions = { database: new Database('shop.db') };
 * ```
 */
export interface BetterSqlite3StoreOptions<Db extends SqliteDatabaseLike = Database> extends SqliteStoreCommonOptions {
  /**
   * A connection of the store's own (`new Database(file)`), not the one the rest of the app writes with:
   * while a delivery's transaction is open, anything else sent on this connection joins it.
   */
  database: Db;
}

/**
 * How `new SqliteStore(...)` is typed: the options pick the client, and the client types `ctx.tx`.
 *
 * @example
 * ```ts
 * const store = new SqliteStore({ database }); // SqliteStore<Database>, ctx.tx typed as the given connection
 * ```
 */
export interface SqliteStoreConstructor {
  new <Db extends SqliteDatabaseLike = Database>(options: BetterSqlite3StoreOptions<Db>): SqliteStore<Db>;
  readonly prototype: SqliteStore<unknown>;
}

/**
 * A transactional store on SQLite: the handler runs inside the store's transaction (`ctx.tx`), and its
 * writes and the dedupe record commit together or not at all.
 *
 * For each fresh key the store takes SQLite's write lock without waiting (`BEGIN IMMEDIATE`; held by another
 * delivery, in this process or another -> `in-progress`, 409 at once), reads the inbox row (found ->
 * duplicate or conflict), runs the handler, then inserts the row and commits. A crash or a killed process
 * rolls everything back and frees the lock at once: no lease, no expiry, nothing orphaned.
 *
 * @example
 * ```ts
 * import { createWebhookHandler } from '@service-pay/core';
 * import { SqliteStore } from '@service-pay/sqlite';
 * import Database from 'better-sqlite3';
 *
 * const store = new SqliteStore({ database: new Database('shop.db') });
 * await store.migrate();
 * const handle = createWebhookHandler({ secret, store, onPaymentPaid: async (event, ctx) => {
 *   ctx.tx.prepare('update orders set paid = 1 where order_no = ?').run(event.orderNo);
 * } });
 * ```
 */
export interface SqliteStore<Tx = Database> extends SqlStoreApi<Tx> {
  /**
   * Opens a transaction holding `key`, or says why not: the database is being written by another delivery
   * (`in-progress`, without waiting) or the key was recorded before (`completed`, with its fingerprint).
   */
  begin(key: string, fingerprint: string): Promise<TransactionClaim<Tx>>;
  /**
   * Creates the inbox table and its indexes if they are missing. Idempotent, and safe when several
   * processes run it at once. Run it once at start-up.
   */
  migrate(): Promise<void>;
}

const USAGE = "SqliteStore: pass { database } (a better-sqlite3 Database: new Database('shop.db')).";

class Store<Tx> extends SqlStore<Tx> {
  constructor(options: BetterSqlite3StoreOptions<SqliteDatabaseLike>) {
    super({
      store: 'SqliteStore',
      // libsql's Database implements better-sqlite3's API: one client serves both.
      client: betterSqlite3Client(databaseOf(options) as unknown as Database, 'SqliteStore') as SqlClient<never>,
      dialect: sqliteDialect,
      options,
      scope: {},
    });
  }
}

/** The connection the options give, checked: a writable better-sqlite3 (or libsql) `Database`. */
function databaseOf(options: BetterSqlite3StoreOptions<SqliteDatabaseLike>): SqliteDatabaseLike {
  if (options === null || typeof options !== 'object') throw new TypeError(USAGE);
  const { database } = options as Partial<BetterSqlite3StoreOptions<SqliteDatabaseLike>>;
  if (database === undefined) throw new TypeError(USAGE);
  if (
    typeof database?.prepare !== 'function' ||
    typeof database.exec !== 'function' ||
    !('inTransaction' in database)
  ) {
    throw new TypeError(
      "SqliteStore: options.database must be a better-sqlite3 (or libsql) Database (new Database('shop.db')).",
    );
  }
  if (database.readonly) throw new TypeError('SqliteStore: options.database is read-only; the store writes its inbox.');
  return database;
}

/**
 * The store class. `new SqliteStore({ database })` for better-sqlite3 or libsql; `ctx.tx` is typed from the
 * connection given.
 *
 * @example
 * ```ts
 * import { SqliteStore } from '@service-pay/sqlite';
 * import Database from 'better-sqlite3';
 *
 * const store = new SqliteStore({ database: new Database('shop.db') });
 * await store.migrate();
 * ```
 */
export const SqliteStore = Store as unknown as SqliteStoreConstructor;
