import { type PostgresTableOptions, SqlStore, sayUnguarded } from '@service-pay/sql';
import { typeOrmClient, typeOrmOption } from '@service-pay/sql/clients/typeorm';
import { postgresDialect } from '@service-pay/sql/postgres';
import type { DataSource, EntityManager } from 'typeorm';
import { guardPgPool } from './clients/node-postgres/pg-pool-guard.js';
import { describePgPool, isPgPool } from './pool-errors.js';

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
export interface TypeOrmStoreOptions extends PostgresTableOptions {
  /** The app's initialized `DataSource` on PostgreSQL (`type: 'postgres'`). */
  dataSource: DataSource;
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
export class TypeOrmStore extends SqlStore<EntityManager> {
  constructor(options: TypeOrmStoreOptions) {
    const dataSource = typeOrmOption(options, 'TypeOrmStore', ['postgres']);
    const { client, scope } = typeOrmClient(dataSource, 'TypeOrmStore', (scope) => {
      // TypeORM's PostgreSQL driver keeps its node-postgres Pool as the public `driver.master`, made when
      // the DataSource is initialized.
      const pool = (dataSource.driver as { master?: unknown } | undefined)?.master;
      if (isPgPool(pool)) guardPgPool(pool, scope, 'TypeOrmStore');
      else
        sayUnguarded(
          dataSource,
          'TypeOrmStore',
          "writes through the app's dataSource beside ctx.tx",
          'use the default (node-postgres) driver',
        );
    });
    super({
      store: 'TypeOrmStore',
      client,
      dialect: postgresDialect,
      options,
      scope,
      // TypeORM's PostgresDriver declares its node-postgres pool as the public `master`.
      describePool: () => describePgPool((dataSource.driver as { master?: unknown } | undefined)?.master),
    });
  }
}
