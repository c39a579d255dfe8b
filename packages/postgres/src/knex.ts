import { refuseOwnTransactions } from '@service-pay/core/node';
import type { Knex } from 'knex';
import type { ClientAdapter, Row } from './clients/client-driver.js';
import { ClientStore } from './clients/client-store.js';

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
export interface KnexStoreOptions {
  /** The app's Knex instance on PostgreSQL (`client: 'pg'`). */
  knex: Knex;
  /** `name` or `schema.name`; default `service_pay_inbox` (the same table as `PostgresStore`'s). */
  tableName?: string | undefined;
}

/** Knex's names for its PostgreSQL client. */
const POSTGRES_DIALECT = 'postgresql';

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
export class KnexStore extends ClientStore<Knex.Transaction> {
  constructor(options: KnexStoreOptions) {
    const knex = (options as Partial<KnexStoreOptions> | null)?.knex;
    if (typeof knex !== 'function' || typeof knex.transaction !== 'function' || typeof knex.raw !== 'function') {
      throw new TypeError("KnexStore: options.knex must be a Knex instance (knex({ client: 'pg', ... })).");
    }
    if ((knex as { isTransaction?: unknown }).isTransaction === true) {
      throw new TypeError("KnexStore: options.knex is a transaction; pass the app's Knex instance.");
    }
    const dialect = (knex.client as { dialect?: unknown } | undefined)?.dialect;
    if (dialect !== POSTGRES_DIALECT) {
      throw new TypeError(
        `KnexStore: options.knex must use PostgreSQL (client: 'pg'), not ${JSON.stringify(dialect)}; for ` +
          'MySQL and SQLite see the README.',
      );
    }
    const scope = {};
    const own = refuseOwnTransactions(knex, ['transaction', 'transactionProvider'], scope, 'KnexStore');
    const adapter: ClientAdapter<Knex.Transaction> = {
      store: 'KnexStore',
      transaction: (work) => own.transaction(work),
      query: async (tx, text) => ((await tx.raw(text)) as { rows: Row[] }).rows,
      queryOutside: async (text) => ((await knex.raw(text)) as { rows: Row[] }).rows,
      rawTextMethods: ['raw'],
    };
    super(adapter, options.tableName, scope);
  }
}
