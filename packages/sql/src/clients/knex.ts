import type { StorePoolState } from '@service-pay/core';
import { refuseOwnTransactions } from '@service-pay/core/node';
import type { Knex } from 'knex';
import { resultOf, type SqlClient, type Statement } from '../client.js';

/**
 * Knex (and MikroORM through its Knex), on any dialect: the delivery in `knex.transaction(...)`, the
 * store's statements through `raw` (Knex binds `?` in its own dialect). `transaction()` and
 * `transactionProvider()` are refused inside a delivery of this store (`scope`).
 *
 * @example
 * ```ts
 * const { client, scope } = knexClient(knex, 'KnexStore');
 * ```
 */
export function knexClient(knex: Knex, store: string): { client: SqlClient<Knex.Transaction>; scope: object } {
  const scope = {};
  const own = refuseOwnTransactions(knex, ['transaction', 'transactionProvider'], scope, store);
  const run = async (executor: Knex | Knex.Transaction, statement: Statement) =>
    resultOf(
      await (statement.values.length === 0
        ? executor.raw(statement.sql)
        : executor.raw(statement.sql, statement.values as Knex.RawBinding[])),
    );
  return {
    scope,
    client: {
      transaction: (work) => own.transaction(work),
      query: run,
      queryOutside: (statement) => run(knex, statement),
      rawTextMethods: ['raw'],
      describePool: () => describeTarnPool((knex.client as { pool?: unknown } | undefined)?.pool),
    },
  };
}

/** What Knex's pool (tarn) shows of itself, publicly: `max` and its counting methods. */
interface TarnPool {
  readonly max: number;
  numUsed(): number;
  numPendingAcquires(): number;
}

/** Knex's pool (tarn) as a pool state; `undefined` before Knex made it, or for anything else. */
function describeTarnPool(pool: unknown): StorePoolState | undefined {
  const tarn = pool as Partial<TarnPool> | null | undefined;
  if (typeof tarn?.numUsed !== 'function' || typeof tarn.numPendingAcquires !== 'function') return undefined;
  if (typeof tarn.max !== 'number') return undefined;
  return { size: tarn.max, inUse: tarn.numUsed(), waiting: tarn.numPendingAcquires() };
}

/**
 * Checks that `knex` is the app's Knex instance on one of `dialects` (Knex's `client.dialect` names),
 * naming the store in the error.
 *
 * @example
 * ```ts
 * const knex = knexOption(options, 'KnexStore', ['postgresql'], "client: 'pg'");
 * ```
 */
export function knexOption(options: unknown, store: string, dialects: readonly string[], example: string): Knex {
  const knex = (options as { knex?: Knex } | null)?.knex;
  if (typeof knex !== 'function' || typeof knex.transaction !== 'function' || typeof knex.raw !== 'function') {
    throw new TypeError(`${store}: options.knex must be a Knex instance (knex({ ${example}, ... })).`);
  }
  if ((knex as { isTransaction?: unknown }).isTransaction === true) {
    throw new TypeError(`${store}: options.knex is a transaction; pass the app's Knex instance.`);
  }
  const dialect = (knex.client as { dialect?: unknown } | undefined)?.dialect;
  if (!dialects.includes(dialect as string)) {
    throw new TypeError(
      `${store}: options.knex must use ${example}, not ${JSON.stringify(dialect)}; the README lists each database's store.`,
    );
  }
  return knex;
}
