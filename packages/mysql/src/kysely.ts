import { type MySqlTableOptions, SqlStore } from '@service-pay/sql';
import { kyselyClient, kyselyOption } from '@service-pay/sql/clients/kysely';
import { mysqlDialect } from '@service-pay/sql/mysql';
import type { Kysely, Transaction } from 'kysely';
import { corePoolOf, guardMysql2Pool } from './clients/mysql2/mysql2-pool-guard.js';

export { OwnTransactionError } from '@service-pay/core/node';

/**
 * Options of `KyselyStore` on MySQL and MariaDB.
 *
 * @example
 * ```ts
 * const options: KyselyStoreOptions<Database> = { db: new Kysely<Database>({ dialect: new MysqlDialect({ pool }) }) };
 * ```
 */
export interface KyselyStoreOptions<DB> extends MySqlTableOptions {
  /** The app's `Kysely` instance on MySQL or MariaDB (`MysqlDialect`). */
  db: Kysely<DB>;
  /**
   * The mysql2 pool under your `MysqlDialect` (Kysely does not say which it is). A write or a transaction
   * the handler sends through `db` beside `ctx.tx` during a delivery is refused either way
   * (`WriteOutsideTransactionError`, `OwnTransactionError`); given the pool, so is one sent through the
   * pool itself (`pool.query`, a connection of `pool.getConnection()`).
   */
  pool?: object | undefined;
}

/**
 * The transactional store on Kysely with MySQL or MariaDB: each delivery runs inside Kysely's own
 * `db.transaction()`, and `ctx.tx` is that `Transaction<DB>`, so the shop writes its credit with its typed
 * Kysely queries and the credit commits with the dedupe record, or not at all. The key is taken without
 * waiting (409 at once for a concurrent delivery, in any process) as a row lock that ends with the
 * transaction: nothing session-scoped ever goes back to the pool.
 *
 * Inside `onPaymentPaid`, `db.transaction()` (or `db.startTransaction()`) on the `db` given here is refused
 * with `OwnTransactionError`, and a write through `db` with `WriteOutsideTransactionError`: either would
 * commit its credit even when the delivery fails, and the sender's retry would credit again. Use `ctx.tx`.
 *
 * @example
 * ```ts
 * import { createWebhookHandler } from '@service-pay/core';
 * import { KyselyStore } from '@service-pay/mysql/kysely';
 * import { Kysely, MysqlDialect } from 'kysely';
 * import { createPool } from 'mysql2';
 *
 * const db = new Kysely<Database>({ dialect: new MysqlDialect({ pool: createPool(process.env.DATABASE_URL!) }) });
 * const store = new KyselyStore({ db });
 * await store.migrate();
 * const handle = createWebhookHandler({ secret, store, onPaymentPaid: async (event, ctx) => {
 *   await ctx.tx.updateTable('orders').set({ paid: 1 }).where('order_no', '=', event.orderNo).execute();
 * } });
 * ```
 */
export class KyselyStore<DB> extends SqlStore<Transaction<DB>> {
  constructor(options: KyselyStoreOptions<DB>) {
    const db = kyselyOption<DB>(options, 'KyselyStore', 'new Kysely<DB>({ dialect: new MysqlDialect(...) })');
    const { client, scope } = kyselyClient(db, 'KyselyStore', { oneConnection: false });
    if (options.pool !== undefined) {
      const core = corePoolOf(options.pool);
      if (core === undefined)
        throw new TypeError('KyselyStore: options.pool must be the mysql2 pool under your MysqlDialect.');
      guardMysql2Pool(core, scope, 'KyselyStore');
    }
    super({ store: 'KyselyStore', client, dialect: mysqlDialect, options, scope });
  }
}
