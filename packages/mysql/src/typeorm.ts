import { type MySqlTableOptions, SqlStore, sayUnguarded } from '@service-pay/sql';
import { typeOrmClient, typeOrmOption } from '@service-pay/sql/clients/typeorm';
import { mysqlDialect } from '@service-pay/sql/mysql';
import type { DataSource, EntityManager } from 'typeorm';
import { corePoolOf, guardMysql2Pool } from './clients/mysql2/mysql2-pool-guard.js';

export { OwnTransactionError } from '@service-pay/core/node';

/**
 * Options of `TypeOrmStore` on MySQL and MariaDB.
 *
 * @example
 * ```ts
 * const options: TypeOrmStoreOptions = { dataSource }; // new DataSource({ type: 'mysql', ... }), initialized
 * ```
 */
export interface TypeOrmStoreOptions extends MySqlTableOptions {
  /** The app's initialized `DataSource` on MySQL or MariaDB (`type: 'mysql'` or `'mariadb'`). */
  dataSource: DataSource;
}

/**
 * The transactional store on TypeORM with MySQL or MariaDB: each delivery runs inside
 * `dataSource.transaction(...)`, and `ctx.tx` is its `EntityManager`, so the shop writes its credit with
 * its repositories and the credit commits with the dedupe record, or not at all. The key is taken without
 * waiting (409 at once for a concurrent delivery, in any process) as a row lock that ends with the
 * transaction. Inside `onPaymentPaid`, `dataSource.transaction()` (and `dataSource.manager.transaction()`)
 * throws `OwnTransactionError`: use `ctx.tx`.
 *
 * @example
 * ```ts
 * import { createWebhookHandler } from '@service-pay/core';
 * import { TypeOrmStore } from '@service-pay/mysql/typeorm';
 *
 * const store = new TypeOrmStore({ dataSource }); // initialized, type: 'mysql' or 'mariadb'
 * const handle = createWebhookHandler({ secret, store, onPaymentPaid: async (event, ctx) => {
 *   await ctx.tx.getRepository(Order).update({ orderNo: event.orderNo }, { paid: true });
 * } });
 * ```
 */
export class TypeOrmStore extends SqlStore<EntityManager> {
  constructor(options: TypeOrmStoreOptions) {
    const dataSource = typeOrmOption(options, 'TypeOrmStore', ['mysql', 'mariadb']);
    const { client, scope } = typeOrmClient(dataSource, 'TypeOrmStore', (scope) => {
      // TypeORM's MySQL driver keeps its mysql2 pool as the public `driver.pool`, made when the DataSource
      // is initialized (its query runners are guarded too, before they wait for a connection).
      const core = corePoolOf((dataSource.driver as { pool?: unknown }).pool);
      if (core === undefined) {
        sayUnguarded(
          dataSource,
          'TypeOrmStore',
          "raw writes on the driver's pool beside ctx.tx",
          'write through ctx.tx only',
        );
      } else guardMysql2Pool(core, scope, 'TypeOrmStore');
    });
    super({ store: 'TypeOrmStore', client, dialect: mysqlDialect, options, scope });
  }
}
