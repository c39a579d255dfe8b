import type { TransactionClaim } from '@service-pay/core';
import { type AutoMigrateOption, type SqlClient, SqlStore, type SqlStoreApi } from '@service-pay/sql';
import { postgresDialect } from '@service-pay/sql/postgres';
import type { Pool, PoolClient } from 'pg';
import { nodePostgresClient } from './clients/node-postgres/node-postgres.js';
import { guardPgPool } from './clients/node-postgres/pg-pool-guard.js';
import { pgliteClient } from './clients/pglite/pglite.js';
import { guardPGlite } from './clients/pglite/pglite-guard.js';
import type { PGliteLike, PGliteTransaction } from './pglite-types.js';
import { describePgPool, keepPoolErrorsFromCrashing } from './pool-errors.js';

/**
 * Options both flavours share.
 *
 * @example
 * ```ts
 * const common: PostgresStoreCommonOptions = { tableName: 'billing.service_pay_inbox' };
 * ```
 */
export interface PostgresStoreCommonOptions extends AutoMigrateOption {
  /**
   * The inbox table, `name` or `schema.name` (plain identifiers, used exactly as given: they are quoted).
   * Default `service_pay_inbox`.
   */
  tableName?: string;
}

/**
 * A store on a node-postgres `Pool`: `ctx.tx` is the attempt's `PoolClient`.
 *
 * @example
 * ```ts
 * import pg from 'pg';
 * const options: PostgresPoolOptions = { pool: new pg.Pool({ connectionString: process.env.DATABASE_URL }) };
 * ```
 */
export interface PostgresPoolOptions extends PostgresStoreCommonOptions {
  /** Each delivery takes one client for its transaction: size the pool for the deliveries you run at once. */
  pool: Pool;
}

/**
 * A store on PGlite (embedded PostgreSQL): `ctx.tx` is the delivery's PGlite `Transaction`.
 *
 * @example
 * ```ts
 * import { PGlite } from '@electric-sql/pglite';
 * const options: PGliteStoreOptions = { pglite: await PGlite.create('./data/shop') };
 * ```
 */
export interface PGliteStoreOptions extends PostgresStoreCommonOptions {
  /** A `PGlite` (or `PGliteWorker`). It runs one transaction at a time; see the README. */
  pglite: PGliteLike;
}

/**
 * How `new PostgresStore(...)` is typed: the options pick the flavour, and the flavour types `ctx.tx`.
 *
 * @example
 * ```ts
 * const pooled = new PostgresStore({ pool });     // PostgresStore<PoolClient>
 * const embedded = new PostgresStore({ pglite }); // PostgresStore<PGliteTransaction>
 * ```
 */
export interface PostgresStoreConstructor {
  new (options: PostgresPoolOptions): PostgresStore<PoolClient>;
  new (options: PGliteStoreOptions): PostgresStore<PGliteTransaction>;
  readonly prototype: PostgresStore<unknown>;
}

/**
 * A transactional store on PostgreSQL (node-postgres) or PGlite: the handler runs inside the store's
 * transaction (`ctx.tx`), and its writes and the dedupe record commit together or not at all.
 *
 * For each fresh key the store opens a transaction and, in the same round trip, takes the key without
 * waiting (a transaction-level advisory lock; held elsewhere -> 409 at once) and writes its inbox row, or
 * finds the row recorded before (duplicate or conflict); then it runs the handler and commits. A crash, a
 * lost connection or a deadline rolls everything back and frees the key at once: no lease, no expiry,
 * nothing orphaned.
 *
 * @example
 * ```ts
 * import { createWebhookHandler } from '@service-pay/core';
 * import { PostgresStore } from '@service-pay/postgres';
 * import pg from 'pg';
 *
 * const store = new PostgresStore({ pool: new pg.Pool({ connectionString: process.env.DATABASE_URL }) });
 * await store.migrate();
 * const handle = createWebhookHandler({ secret, store, onPaymentPaid: async (event, ctx) => {
 *   await ctx.tx.query('update orders set paid = true where order_no = $1', [event.orderNo]);
 * } });
 * ```
 */
export interface PostgresStore<Tx = PoolClient> extends SqlStoreApi<Tx> {
  /**
   * Opens a transaction holding `key`, or says why not: another transaction holds it (`in-progress`,
   * without waiting) or it was recorded before (`completed`, with the recorded fingerprint).
   */
  begin(key: string, fingerprint: string): Promise<TransactionClaim<Tx>>;
  /**
   * Creates the inbox table and its `created_at` and `payment_id` indexes if they are missing. Idempotent, and safe when
   * several processes run it at once (they take turns on an advisory lock). Run it once at start-up.
   */
  migrate(): Promise<void>;
}

class Store<Tx> extends SqlStore<Tx> {
  constructor(options: PostgresPoolOptions | PGliteStoreOptions) {
    const pool = (options as Partial<PostgresPoolOptions> | null)?.pool;
    const scope = {};
    super({
      store: 'PostgresStore',
      client: clientOf(options, scope) as unknown as SqlClient<Tx>,
      dialect: postgresDialect,
      options,
      scope,
      // The pool's counters, asked only once a begin timed out: a full pool is logged as such.
      describePool: pool === undefined ? undefined : () => describePgPool(pool),
    });
  }
}

/** The client the options name: node-postgres for `pool`, PGlite for `pglite`; a clear error otherwise. */
function clientOf(
  options: PostgresPoolOptions | PGliteStoreOptions,
  scope: object,
): SqlClient<PoolClient | PGliteTransaction> {
  if (options === null || typeof options !== 'object') {
    throw new TypeError('PostgresStore: pass { pool } (a node-postgres Pool) or { pglite } (a PGlite).');
  }
  const { pool } = options as Partial<PostgresPoolOptions>;
  const { pglite } = options as Partial<PGliteStoreOptions>;
  if (pool !== undefined && pglite !== undefined) {
    throw new TypeError('PostgresStore: pass either pool or pglite, not both.');
  }
  if (pool !== undefined) {
    if (typeof pool?.connect !== 'function' || typeof pool.query !== 'function') {
      throw new TypeError('PostgresStore: options.pool must be a node-postgres Pool (new pg.Pool(...)).');
    }
    keepPoolErrorsFromCrashing(pool);
    guardPgPool(pool, scope, 'PostgresStore');
    return nodePostgresClient(pool, 'PostgresStore') as SqlClient<PoolClient | PGliteTransaction>;
  }
  if (pglite !== undefined) {
    if (typeof pglite?.transaction !== 'function' || typeof pglite.query !== 'function') {
      throw new TypeError('PostgresStore: options.pglite must be a PGlite instance (await PGlite.create(...)).');
    }
    guardPGlite(pglite, scope, 'PostgresStore');
    return pgliteClient(pglite, 'PostgresStore') as SqlClient<PoolClient | PGliteTransaction>;
  }
  throw new TypeError('PostgresStore: pass { pool } (a node-postgres Pool) or { pglite } (a PGlite).');
}

/**
 * The store class. `new PostgresStore({ pool })` for node-postgres, `new PostgresStore({ pglite })` for
 * PGlite; `TxOf<typeof store>` (and `ctx.tx`) is `PoolClient` or PGlite's `Transaction` accordingly.
 *
 * @example
 * ```ts
 * import { PGlite } from '@electric-sql/pglite';
 * import { PostgresStore } from '@service-pay/postgres';
 *
 * const store = new PostgresStore({ pglite: await PGlite.create() });
 * await store.migrate();
 * ```
 */
export const PostgresStore = Store as unknown as PostgresStoreConstructor;
