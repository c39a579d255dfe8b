import { refuseOwnTransactions } from '@service-pay/core/node';
import type { DataSource, EntityManager } from 'typeorm';
import type { ClientAdapter, Row } from './clients/client-driver.js';
import { ClientStore } from './clients/client-store.js';

export { OwnTransactionError } from '@service-pay/core/node';

/**
 * Options of `TypeOrmStore`.
 *
 * @example
 * ```ts
 * import { DataSource } from 'typeorm';
 * const options: TypeOrmStoreOptions = { dataSource: await new DataSource({ type: 'postgres', url }).initialize() };
 * ```
 */
export interface TypeOrmStoreOptions {
  /** The app's initialized `DataSource` on PostgreSQL (`type: 'postgres'`). */
  dataSource: DataSource;
  /** `name` or `schema.name`; default `service_pay_inbox` (the same table as `PostgresStore`'s). */
  tableName?: string | undefined;
}

/**
 * The transactional store on TypeORM (PostgreSQL): each delivery runs inside TypeORM's own
 * `dataSource.transaction(...)`, and `ctx.tx` is that transaction's `EntityManager`, so the shop writes its
 * credit with its entities (`ctx.tx.getRepository(Order)`) and the credit commits with the dedupe record, or
 * not at all. Same table and guarantees as `PostgresStore`.
 *
 * Inside `onPaymentPaid`, `dataSource.transaction(...)` and `dataSource.manager.transaction(...)` throw
 * `OwnTransactionError`: a transaction of the handler's own would commit its credit even when the delivery
 * fails, and the sender's retry would credit again. Use `ctx.tx`.
 *
 * @example
 * ```ts
 * import { createWebhookHandler } from '@service-pay/core';
 * import { TypeOrmStore } from '@service-pay/postgres/typeorm';
 *
 * const store = new TypeOrmStore({ dataSource }); // the app's initialized DataSource
 * await store.migrate();
 * const handle = createWebhookHandler({ secret, store, onPaymentPaid: async (event, ctx) => {
 *   await ctx.tx.getRepository(Order).update({ orderNo: event.orderNo }, { paid: true });
 * } });
 * ```
 */
export class TypeOrmStore extends ClientStore<EntityManager> {
  constructor(options: TypeOrmStoreOptions) {
    const dataSource = (options as Partial<TypeOrmStoreOptions> | null)?.dataSource;
    if (
      dataSource === null ||
      typeof dataSource !== 'object' ||
      typeof dataSource.transaction !== 'function' ||
      typeof dataSource.query !== 'function'
    ) {
      throw new TypeError("TypeOrmStore: options.dataSource must be a TypeORM DataSource (type: 'postgres').");
    }
    const type = (dataSource.options as { type?: unknown } | undefined)?.type;
    if (type !== 'postgres') {
      throw new TypeError(
        `TypeOrmStore: options.dataSource must use PostgreSQL (type: 'postgres'), not ${JSON.stringify(type)}.`,
      );
    }
    if (!dataSource.isInitialized) {
      throw new TypeError('TypeOrmStore: options.dataSource is not initialized; await dataSource.initialize() first.');
    }
    const scope = {};
    const own = refuseOwnTransactions(dataSource, ['transaction'], scope, 'TypeOrmStore');
    refuseOwnTransactions(dataSource.manager, ['transaction'], scope, 'TypeOrmStore');
    const adapter: ClientAdapter<EntityManager> = {
      store: 'TypeOrmStore',
      transaction: (work) => own.transaction(work),
      query: async (tx, text) => (await tx.query(text)) as Row[],
      queryOutside: async (text) => (await dataSource.query(text)) as Row[],
      rawTextMethods: ['query'],
    };
    super(adapter, options.tableName, scope);
  }
}
