import { oneConnection, type SqliteTableOptions, SqlStore } from '@service-pay/sql';
import { kyselyClient, kyselyOption } from '@service-pay/sql/clients/kysely';
import { sqliteDialect } from '@service-pay/sql/sqlite';
import type { Kysely, Transaction } from 'kysely';

export { OwnTransactionError } from '@service-pay/core/node';
export { ConnectionHeldError } from '@service-pay/sql/clients/kysely';

/**
 * Options of `KyselyStore` on SQLite.
 *
 * @example
 * ```ts
 * const options: KyselyStoreOptions<Database> = { db: new Kysely<Database>({ dialect: new SqliteDialect({ database }) }) };
 * ```
 */
export interface KyselyStoreOptions<DB> extends SqliteTableOptions {
  /** The app's `Kysely` instance on SQLite (`SqliteDialect` on a better-sqlite3 `Database`). */
  db: Kysely<DB>;
}

/**
 * The transactional store on Kysely with SQLite: each delivery runs inside Kysely's own `db.transaction()`,
 * and `ctx.tx` is that `Transaction<DB>`, so the shop writes its credit with its typed Kysely queries and
 * the credit commits with the dedupe record, or not at all. The key is SQLite's write lock, taken by the
 * claim: one delivery writes at a time per database file. In this process another delivery answers
 * in-progress (409) at once; in another process it waits up to the connection's `busy_timeout` for the
 * lock, then answers in-progress.
 *
 * The handler writes through `ctx.tx`. Inside `onPaymentPaid`, on the `db` given here, `db.transaction()`
 * or `db.startTransaction()` is refused with `OwnTransactionError` (that transaction would commit even when
 * the delivery fails, and the retry would credit again). Any other query through `db` runs in the
 * delivery's transaction, as on the store's better-sqlite3 connection: SQLite is one connection and the
 * delivery holds it, so left to Kysely the query would wait for the delivery while the delivery waits for
 * it. `stream()` and `db.connection()`, which need the connection itself, are refused
 * (`ConnectionHeldError`, `CONNECTION_HELD_BY_DELIVERY`).
 *
 * @example
 * ```ts
 * import { createWebhookHandler } from '@service-pay/core';
 * import { KyselyStore } from '@service-pay/sqlite/kysely';
 * import Database from 'better-sqlite3';
 * import { Kysely, SqliteDialect } from 'kysely';
 *
 * const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: new Database('shop.db') }) });
 * const store = new KyselyStore({ db });
 * await store.migrate();
 * const handle = createWebhookHandler({ secret, store, onPaymentPaid: async (event, ctx) => {
 *   await ctx.tx.updateTable('orders').set({ paid: 1 }).where('order_no', '=', event.orderNo).execute();
 * } });
 * ```
 */
export class KyselyStore<DB> extends SqlStore<Transaction<DB>> {
  constructor(options: KyselyStoreOptions<DB>) {
    const db = kyselyOption<DB>(options, 'KyselyStore', 'new Kysely<DB>({ dialect: new SqliteDialect(...) })');
    const { client, scope } = kyselyClient(db, 'KyselyStore', { oneConnection: true });
    super({
      store: 'KyselyStore',
      // Kysely's SQLite dialect is one connection: a delivery's transaction holds it.
      client: oneConnection(client, db),
      dialect: sqliteDialect,
      options,
      scope,
    });
  }
}
