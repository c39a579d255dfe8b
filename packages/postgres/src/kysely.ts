import { type PostgresTableOptions, SqlStore } from '@service-pay/sql';
import { kyselyClient, kyselyOption } from '@service-pay/sql/clients/kysely';
import { postgresDialect } from '@service-pay/sql/postgres';
import type { Kysely, Transaction } from 'kysely';
import { guardPgPool } from './clients/node-postgres/pg-pool-guard.js';
import { describePgPool, isPgPool, keepCheckedOutClientsFromCrashing } from './pool-errors.js';

export { OwnTransactionError } from '@service-pay/core/node';

/** PostgreSQL's read-only transaction of one statement's own, for what the app's `db` sends in a delivery. */
const READ_ONLY = { begin: 'begin read only', end: 'rollback' } as const;

/**
 * Options of `KyselyStore`.
 *
 * @example
 * ```ts
 * import { Kysely, PostgresDialect } from 'kysely';
 * const options: KyselyStoreOptions<Database> = { db: new Kysely<Database>({ dialect: new PostgresDialect({ pool }) }), pool };
 * ```
 */
export interface KyselyStoreOptions<DB> extends PostgresTableOptions {
  /** The app's `Kysely` instance on PostgreSQL (`PostgresDialect`, or any dialect that speaks PostgreSQL). */
  db: Kysely<DB>;
  /**
   * The node-postgres `Pool` under your `PostgresDialect`, if that is what it runs on (Kysely does not say).
   * Given, the store keeps a checked-out client whose connection drops (PostgreSQL restarted) from crashing
   * the app: node-postgres emits `error` on such a client with no listener (without it, add
   * `pool.on('acquire', (client) => client.on('error', ...))` yourself); and during a delivery it refuses a
   * write or a transaction the handler sends through the pool itself beside `ctx.tx` (`pool.query`, a
   * client of `pool.connect()`). Writes and transactions through `db` are refused either way.
   */
  pool?: { on: (...args: never[]) => unknown } | undefined;
}

/**
 * The transactional store on Kysely: each delivery runs inside Kysely's own `db.transaction()`, and
 * `ctx.tx` is that `Transaction<DB>`, so the shop writes its credit with the query builder it already uses
 * and the credit commits with the dedupe record, or not at all. Same table and guarantees as
 * `PostgresStore`: the key is taken without waiting (409 at once for a concurrent delivery, in any
 * process), a rejection keeps its inbox row, a crash or a lost connection rolls back and frees the key.
 *
 * Inside `onPaymentPaid`, `db.transaction()` and `db.startTransaction()` on the `db` given here are
 * refused with `OwnTransactionError`, and a write through `db` with `WriteOutsideTransactionError`: either
 * would commit its credit even when the delivery fails, and the sender's retry would credit again. Use
 * `ctx.tx`. A read through `db` then runs in a read-only transaction of its own on the connection Kysely
 * takes for it, so a function that writes fails on the server and is refused the same way.
 *
 * @example
 * ```ts
 * import { createWebhookHandler } from '@service-pay/core';
 * import { KyselyStore } from '@service-pay/postgres/kysely';
 *
 * const store = new KyselyStore({ db, pool }); // db: the app's Kysely<Database> on PostgresDialect({ pool })
 * await store.migrate();
 * const handle = createWebhookHandler({ secret, store, onPaymentPaid: async (event, ctx) => {
 *   await ctx.tx.updateTable('orders').set({ paid: true }).where('order_no', '=', event.orderNo).execute();
 * } });
 * ```
 */
export class KyselyStore<DB> extends SqlStore<Transaction<DB>> {
  constructor(options: KyselyStoreOptions<DB>) {
    const db = kyselyOption<DB>(options, 'KyselyStore', 'new Kysely<DB>({ dialect })');
    if (options.pool !== undefined) {
      if (!isPgPool(options.pool)) {
        throw new TypeError('KyselyStore: options.pool must be the node-postgres Pool under your PostgresDialect.');
      }
      keepCheckedOutClientsFromCrashing(options.pool);
    }
    // Pool or not, what `db` sends during a delivery runs read-only on the server (see kyselyClient).
    const { client, scope } = kyselyClient(db, 'KyselyStore', { oneConnection: false, readOnly: READ_ONLY });
    if (options.pool !== undefined) guardPgPool(options.pool, scope, 'KyselyStore');
    super({
      store: 'KyselyStore',
      client,
      dialect: postgresDialect,
      options,
      scope,
      describePool: options.pool === undefined ? undefined : () => describePgPool(options.pool),
    });
  }
}
