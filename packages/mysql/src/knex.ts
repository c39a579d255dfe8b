import { type MySqlTableOptions, SqlStore } from '@service-pay/sql';
import { knexClient, knexOption } from '@service-pay/sql/clients/knex';
import { mysqlDialect } from '@service-pay/sql/mysql';
import type { Knex } from 'knex';

export { OwnTransactionError } from '@service-pay/core/node';

/**
 * Options of `KnexStore` on MySQL and MariaDB.
 *
 * @example
 * ```ts
 * import knex from 'knex';
 * const options: KnexStoreOptions = { knex: knex({ client: 'mysql2', connection: process.env.DATABASE_URL }) };
 * ```
 */
export interface KnexStoreOptions extends MySqlTableOptions {
  /** The app's Knex instance on MySQL or MariaDB (`client: 'mysql2'`). */
  knex: Knex;
}

/**
 * The transactional store on Knex with MySQL or MariaDB: each delivery runs inside Knex's own
 * `knex.transaction(...)`, and `ctx.tx` is that `Knex.Transaction`, so the shop writes its credit with its
 * query builder and the credit commits with the dedupe record, or not at all. The key is taken without
 * waiting (409 at once for a concurrent delivery, in any process) as a row lock that ends with the
 * transaction. Inside `onPaymentPaid`, `knex.transaction()` on the instance given here throws
 * `OwnTransactionError`: use `ctx.tx`.
 *
 * @example
 * ```ts
 * import { createWebhookHandler } from '@service-pay/core';
 * import { KnexStore } from '@service-pay/mysql/knex';
 * import knex from 'knex';
 *
 * const store = new KnexStore({ knex: knex({ client: 'mysql2', connection: process.env.DATABASE_URL }) });
 * const handle = createWebhookHandler({ secret, store, onPaymentPaid: async (event, ctx) => {
 *   await ctx.tx('orders').where({ order_no: event.orderNo }).update({ paid: 1 });
 * } });
 * ```
 */
export class KnexStore extends SqlStore<Knex.Transaction> {
  constructor(options: KnexStoreOptions) {
    const knex = knexOption(options, 'KnexStore', ['mysql', 'mysql2'], "client: 'mysql2'");
    const { client, scope } = knexClient(knex, 'KnexStore');
    super({ store: 'KnexStore', client, dialect: mysqlDialect, options, scope });
  }
}
