import { type PostgresTableOptions, SqlStore } from '@service-pay/sql';
import { knexClient, knexOption } from '@service-pay/sql/clients/knex';
import { postgresDialect } from '@service-pay/sql/postgres';
import type { Knex } from 'knex';

export { OwnTransactionError } from '@service-pay/core/node';

/**
 * Options of `KnexStore`.
 *
 * @example
 * ```ts
 * import knex from 'knex';
 * const options: KnexStoreOptions = { knex: knex({ client: 'pg', connection: process.env.DATABASE_URL }) };
 * ```
 */
export interface KnexStoreOptions extends PostgresTableOptions {
  /** The app's Knex instance on PostgreSQL (`client: 'pg'`). */
  knex: Knex;
}

/**
 * The transactional store on Knex (PostgreSQL): each delivery runs inside Knex's own
 * `knex.transaction(...)`, and `ctx.tx` is that `Knex.Transaction`, so the shop writes its credit with
 * Knex and the credit commits with the dedupe record, or not at all. Same table and guarantees as
 * `PostgresStore`.
 *
 * Inside `onPaymentPaid`, `knex.transaction(...)` on the instance given here throws `OwnTransactionError`:
 * a transaction of the handler's own would commit its credit even when the delivery fails, and the
 * sender's retry would credit again. Use `ctx.tx` (`ctx.tx.transaction(...)` is a savepoint, which is fine).
 *
 * @example
 * ```ts
 * import { createWebhookHandler } from '@service-pay/core';
 * import { KnexStore } from '@service-pay/postgres/knex';
 * import knex from 'knex';
 *
 * const db = knex({ client: 'pg', connection: process.env.DATABASE_URL });
 * const store = new KnexStore({ knex: db });
 * await store.migrate();
 * const handle = createWebhookHandler({ secret, store, onPaymentPaid: async (event, ctx) => {
 *   await ctx.tx('orders').where({ order_no: event.orderNo }).update({ paid: true });
 * } });
 * ```
 */
export class KnexStore extends SqlStore<Knex.Transaction> {
  constructor(options: KnexStoreOptions) {
    const knex = knexOption(options, 'KnexStore', ['postgresql'], "client: 'pg'");
    const { client, scope } = knexClient(knex, 'KnexStore');
    super({ store: 'KnexStore', client, dialect: postgresDialect, options, scope });
  }
}
