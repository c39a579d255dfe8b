import { type PostgresTableOptions, SqlStore } from '@service-pay/sql';
import { postgresDialect } from '@service-pay/sql/postgres';
import type { Sql, TransactionSql } from 'postgres';
import { guardPostgresJs, postgresJsClient } from './clients/postgres-js/postgres-js.js';

export { guardSql } from './clients/postgres-js/postgres-js.js';

/**
 * Options of `PostgresJsStore`.
 *
 * @example
 * ```ts
 * import postgres from 'postgres';
 * const options: PostgresJsStoreOptions = { sql: postgres(process.env.DATABASE_URL!) };
 * ```
 */
export interface PostgresJsStoreOptions extends PostgresTableOptions {
  /** The app's postgres.js instance. Each delivery holds one of its connections for its transaction. */
  sql: Sql;
}

/**
 * `PostgresStore` on postgres.js (and Drizzle on postgres.js): each delivery runs inside the client's own
 * `sql.begin(...)`, and `ctx.tx` is its `TransactionSql`, so the credit is written with the client the shop
 * already uses and commits with the dedupe record, or not at all. Same table, same guarantees: the key is
 * taken without waiting (409 at once for a concurrent delivery, in any process), a rejection keeps its
 * inbox row, a crash or a lost connection rolls back and frees the key.
 *
 * `ctx.tx` refuses BEGIN/COMMIT/ROLLBACK and any use after the delivery ended. In the handler,
 * `sql.begin(...)` and a write through `sql.unsafe(...)` on the `sql` given here are refused (a second
 * transaction, or a write, that would commit whatever happens to the delivery); so is a write through the
 * tagged template `sql\`...\`` when the app's `sql` is made with `guardSql(postgres(url))`, the only way to see
 * that call (given a plain instance, the store says so once at construction). A read there runs in a
 * read-only transaction of its own (`sql.begin('read only', ...)`), so a function that writes fails on the
 * server and is refused the same way.
 *
 * @example
 * ```ts
 * import { createWebhookHandler } from '@service-pay/core';
 * import { guardSql, PostgresJsStore } from '@service-pay/postgres/postgres-js';
 * import postgres from 'postgres';
 *
 * export const sql = guardSql(postgres(process.env.DATABASE_URL!)); // the app's sql, everywhere
 * const store = new PostgresJsStore({ sql });
 * await store.migrate();
 * const handle = createWebhookHandler({ secret, store, onPaymentPaid: async (event, ctx) => {
 *   await ctx.tx`update orders set paid = true where order_no = ${event.orderNo}`;
 * } });
 * ```
 */
export class PostgresJsStore extends SqlStore<TransactionSql> {
  constructor(options: PostgresJsStoreOptions) {
    const sql = (options as Partial<PostgresJsStoreOptions> | null)?.sql;
    if (typeof sql !== 'function' || typeof sql.begin !== 'function' || typeof sql.unsafe !== 'function') {
      throw new TypeError('PostgresJsStore: options.sql must be a postgres.js instance (postgres(url)).');
    }
    const client = postgresJsClient(sql);
    const scope = {};
    guardPostgresJs(sql, scope, 'PostgresJsStore');
    super({ store: 'PostgresJsStore', client, dialect: postgresDialect, options, scope });
  }
}
