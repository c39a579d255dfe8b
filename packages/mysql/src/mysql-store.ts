import { type MySqlTableOptions, SqlStore } from '@service-pay/sql';
import { mysqlDialect } from '@service-pay/sql/mysql';
import type { Pool, PoolConnection } from 'mysql2/promise';
import { mysql2Client } from './clients/mysql2/mysql2.js';
import { corePoolOf, guardMysql2Pool } from './clients/mysql2/mysql2-pool-guard.js';

/**
 * Options of `MySqlStore`.
 *
 * @example
 * ```ts
 * import mysql from 'mysql2/promise';
 * const options: MySqlStoreOptions = { pool: mysql.createPool(process.env.DATABASE_URL!) };
 * ```
 */
export interface MySqlStoreOptions extends MySqlTableOptions {
  /** A mysql2 promise pool. Each delivery holds one of its connections for its transaction. */
  pool: Pool;
}

/**
 * The transactional store on MySQL 8 and MariaDB 10.6+ (mysql2): the handler runs inside the store's
 * transaction (`ctx.tx` is the delivery's `PoolConnection`), and its writes and the dedupe record commit
 * together or not at all.
 *
 * For each fresh key the store reads the inbox row without locking (found -> duplicate or conflict, one
 * round trip), takes a pool connection, opens a transaction, takes the key without waiting (a row lock on
 * one of the lock slots `migrate()` makes beside the table, `FOR UPDATE NOWAIT`; held by another
 * transaction -> 409 at once, in any process), takes a savepoint, runs the handler, inserts the row and
 * commits. The lock is a row lock, so it ends with the transaction whatever ends it: nothing
 * session-scoped ever reaches the next user of a pooled connection, and every store on the table (the ORM
 * stores too) takes the same lock. A crash or a lost connection ends the session: the server rolls back
 * and frees the key at once.
 *
 * @example
 * ```ts
 * import { createWebhookHandler } from '@service-pay/core';
 * import { MySqlStore } from '@service-pay/mysql';
 * import mysql from 'mysql2/promise';
 *
 * const store = new MySqlStore({ pool: mysql.createPool(process.env.DATABASE_URL!) });
 * await store.migrate();
 * const handle = createWebhookHandler({ secret, store, onPaymentPaid: async (event, ctx) => {
 *   await ctx.tx.query('update orders set paid = true where order_no = ?', [event.orderNo]);
 * } });
 * ```
 */
export class MySqlStore extends SqlStore<PoolConnection> {
  constructor(options: MySqlStoreOptions) {
    const pool = (options as Partial<MySqlStoreOptions> | null)?.pool;
    if (
      pool === null ||
      typeof pool !== 'object' ||
      typeof pool.getConnection !== 'function' ||
      typeof pool.query !== 'function'
    ) {
      throw new TypeError(
        "MySqlStore: options.pool must be a mysql2 promise pool (mysql.createPool(...) from 'mysql2/promise').",
      );
    }
    const client = mysql2Client(pool, 'MySqlStore');
    const scope = {};
    const core = corePoolOf(pool);
    if (core !== undefined) guardMysql2Pool(core, scope, 'MySqlStore');
    super({ store: 'MySqlStore', client, dialect: mysqlDialect, options, scope });
  }
}
