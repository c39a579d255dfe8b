import {
  type ClientGuard,
  clientGuard,
  OwnTransactionError,
  refusedValue,
  refuseOwnTransactions,
  wrapMethod,
} from '@service-pay/core/node';
import type { DataSource, EntityManager } from 'typeorm';
import { answered, runThrough, type SqlClient, type Statement } from '../client.js';
import { statementRefusal } from '../guard/statement-kind.js';
import { clientOption } from './option.js';

/**
 * TypeORM, on any of its SQL drivers: the delivery in `dataSource.transaction(...)`, `ctx.tx` its
 * `EntityManager`, the store's statements through `query` (in the driver's own placeholders).
 * `dataSource.transaction()`, `dataSource.manager.transaction()` and a query runner's
 * `startTransaction()` are refused inside a delivery of this store (`scope`).
 *
 * @example
 * ```ts
 * const { client, scope } = typeOrmClient(dataSource, 'TypeOrmStore');
 * ```
 */
export function typeOrmClient(
  dataSource: DataSource,
  store: string,
  /** Guards the driver's pool; run once the DataSource is initialized (its driver makes the pool then). */
  guardPool?: (scope: object) => void,
): { client: SqlClient<EntityManager>; scope: object } {
  const scope = {};
  let poolGuarded = false;
  const guardPoolOnce = () => {
    if (poolGuarded || guardPool === undefined || !dataSource.isInitialized) return;
    poolGuarded = true;
    guardPool(scope);
  };
  // Now, or when the app initializes it: a store is often made before `await dataSource.initialize()`.
  whenInitialized(dataSource, guardPoolOnce);
  const own = refuseOwnTransactions(dataSource, ['transaction'], scope, store);
  refuseOwnTransactions(dataSource.manager, ['transaction'], scope, store);
  // Each query runner the app creates (every dataSource/manager/repository call makes one): its
  // statements judged before it waits for a connection, its startTransaction() refused. The store's own
  // runners (made while it opens a delivery) are left alone: they are ctx.tx's.
  const guard = clientGuard(dataSource, scope, store);
  wrapMethod(dataSource, 'createQueryRunner', (original, args) => {
    const runner = original(...args) as { startTransaction?: unknown; query?: unknown };
    if (guard.storeWork()) return runner;
    guardRunner(runner, guard);
    return runner;
  });
  const run = (executor: DataSource | EntityManager, statement: Statement) => {
    try {
      return answered(executor.query(statement.sql, statement.values.length === 0 ? undefined : [...statement.values]));
    } catch (error) {
      return Promise.reject(error);
    }
  };
  return {
    scope,
    client: runThrough<EntityManager, DataSource>(
      dataSource,
      run,
      (work) => {
        guardPoolOnce(); // initialized some other way than its own initialize(): at the first delivery
        return own.transaction(work);
      },
      ['query'],
    ),
  };
}

/**
 * Runs `fn` once `dataSource` is initialized: at once if it is, else when its `initialize()` resolves
 * (wrapped on the instance, an own property; TypeORM's `connect()` goes through it too).
 *
 * @example
 * ```ts
 * whenInitialized(dataSource, () => guardPgPool(dataSource.driver.master, scope, 'TypeOrmStore'));
 * ```
 */
export function whenInitialized(dataSource: DataSource, fn: () => void): void {
  if (dataSource.isInitialized) {
    fn();
    return;
  }
  const initialize = dataSource.initialize;
  Object.defineProperty(dataSource, 'initialize', {
    configurable: true,
    writable: true,
    value: async function initialized(this: DataSource, ...args: unknown[]) {
      const result = await (initialize as (...a: unknown[]) => Promise<DataSource>).apply(this, args);
      fn();
      return result;
    },
  });
}

/**
 * Checks that `dataSource` is a TypeORM DataSource of one of `types`, naming the store. It may still be
 * uninitialized: the store guards its pool once it is (`whenInitialized`).
 *
 * @example
 * ```ts
 * const dataSource = typeOrmOption(options, 'TypeOrmStore', ['postgres']);
 * ```
 */
export function typeOrmOption(options: unknown, store: string, types: readonly string[]): DataSource {
  const dataSource = clientOption<DataSource>(options, 'dataSource', ['transaction', 'query']);
  const wanted = types.map((type) => `type: '${type}'`).join(' or ');
  if (dataSource === undefined) {
    throw new TypeError(`${store}: options.dataSource must be a TypeORM DataSource (${wanted}).`);
  }
  const type = (dataSource.options as { type?: unknown } | undefined)?.type;
  if (!types.includes(type as string)) {
    throw new TypeError(`${store}: options.dataSource must use ${wanted}, not ${JSON.stringify(type)}.`);
  }
  return dataSource;
}

/** A query runner of the app's: `startTransaction()` and writes through `query()` refused in a delivery. */
function guardRunner(runner: { startTransaction?: unknown; query?: unknown }, guard: ClientGuard): void {
  const start = runner.startTransaction;
  const query = runner.query;
  if (typeof start === 'function') {
    runner.startTransaction = (...args: unknown[]) => {
      const inside = guard.running();
      if (inside === undefined) return (start as (...a: unknown[]) => unknown).apply(runner, args);
      return refusedValue(
        inside.delivery.refuse(new OwnTransactionError(inside.store, 'queryRunner.startTransaction()')),
      );
    };
  }
  if (typeof query === 'function') {
    runner.query = (...args: unknown[]) => {
      const inside = guard.running();
      const error = inside === undefined ? undefined : statementRefusal(inside.store, args[0], 'queryRunner.query');
      if (inside === undefined || error === undefined)
        return (query as (...a: unknown[]) => unknown).apply(runner, args);
      return inside.delivery.refuse(error);
    };
  }
}
