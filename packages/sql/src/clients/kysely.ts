import { refuseOwnTransactions } from '@service-pay/core/node';
import { CompiledQuery, type Kysely, type Transaction } from 'kysely';
import { resultOf, runThrough, type SqlClient, type Statement } from '../client.js';
import { clientOption } from './option.js';

/**
 * Kysely, on any dialect: the delivery in `db.transaction().execute(...)`, the store's statements through
 * `executeQuery` of a raw compiled query. `db.transaction()` and `db.startTransaction()` are refused inside
 * a delivery of this store (`scope`): the handler's own transaction would commit apart from the delivery.
 *
 * @example
 * ```ts
 * const { client, scope } = kyselyClient(db, 'KyselyStore');
 * ```
 */
export function kyselyClient<DB>(db: Kysely<DB>, store: string): { client: SqlClient<Transaction<DB>>; scope: object } {
  const scope = {};
  const own = refuseOwnTransactions(db, ['transaction', 'startTransaction'], scope, store);
  const run = async (executor: Kysely<DB>, statement: Statement) =>
    resultOf(await executor.executeQuery(CompiledQuery.raw(statement.sql, [...statement.values])));
  return {
    scope,
    client: runThrough<Transaction<DB>, Kysely<DB>>(db, run, (work) => own.transaction().execute(work), []),
  };
}

/**
 * Checks that `db` is the app's Kysely instance (not a transaction), naming the store in the error.
 *
 * @example
 * ```ts
 * const db = kyselyOption(options, 'KyselyStore', 'new Kysely<DB>({ dialect })');
 * ```
 */
export function kyselyOption<DB>(options: unknown, store: string, example: string): Kysely<DB> {
  const db = clientOption<Kysely<DB>>(options, 'db', ['transaction', 'selectFrom']);
  if (db === undefined) {
    throw new TypeError(`${store}: options.db must be a Kysely instance (${example}).`);
  }
  if (db.isTransaction) throw new TypeError(`${store}: options.db is a Transaction; pass the app's Kysely instance.`);
  return db;
}
