import { refuseOwnTransactions } from '@service-pay/core/node';
import type { DataSource, EntityManager } from 'typeorm';
import { resultOf, type SqlClient, type Statement } from '../client.js';

/**
 * TypeORM, on any of its SQL drivers: the delivery in `dataSource.transaction(...)`, `ctx.tx` its
 * `EntityManager`, the store's statements through `query` (in the driver's own placeholders).
 * `dataSource.transaction()` and `dataSource.manager.transaction()` are refused inside a delivery of this
 * store (`scope`).
 *
 * @example
 * ```ts
 * const { client, scope } = typeOrmClient(dataSource, 'TypeOrmStore');
 * ```
 */
export function typeOrmClient(
  dataSource: DataSource,
  store: string,
): { client: SqlClient<EntityManager>; scope: object } {
  const scope = {};
  const own = refuseOwnTransactions(dataSource, ['transaction'], scope, store);
  refuseOwnTransactions(dataSource.manager, ['transaction'], scope, store);
  const run = async (executor: DataSource | EntityManager, statement: Statement) =>
    resultOf(await executor.query(statement.sql, statement.values.length === 0 ? undefined : [...statement.values]));
  return {
    scope,
    client: {
      transaction: (work) => own.transaction(work),
      query: run,
      queryOutside: (statement) => run(dataSource, statement),
      rawTextMethods: ['query'],
    },
  };
}

/**
 * Checks that `dataSource` is an initialized TypeORM DataSource of one of `types`, naming the store.
 *
 * @example
 * ```ts
 * const dataSource = typeOrmOption(options, 'TypeOrmStore', ['postgres']);
 * ```
 */
export function typeOrmOption(options: unknown, store: string, types: readonly string[]): DataSource {
  const dataSource = (options as { dataSource?: DataSource } | null)?.dataSource;
  const wanted = types.map((type) => `type: '${type}'`).join(' or ');
  if (
    dataSource === null ||
    typeof dataSource !== 'object' ||
    typeof dataSource.transaction !== 'function' ||
    typeof dataSource.query !== 'function'
  ) {
    throw new TypeError(`${store}: options.dataSource must be a TypeORM DataSource (${wanted}).`);
  }
  const type = (dataSource.options as { type?: unknown } | undefined)?.type;
  if (!types.includes(type as string)) {
    throw new TypeError(`${store}: options.dataSource must use ${wanted}, not ${JSON.stringify(type)}.`);
  }
  if (!dataSource.isInitialized) {
    throw new TypeError(`${store}: options.dataSource is not initialized; await dataSource.initialize() first.`);
  }
  return dataSource;
}
