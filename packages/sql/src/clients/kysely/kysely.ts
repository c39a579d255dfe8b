import { refuseOwnTransactions } from '@service-pay/core/node';
import { CompiledQuery, type Kysely, type Transaction } from 'kysely';
import { answered, runThrough, type SqlClient, type Statement } from '../../client.js';
import { clientOption } from '../option.js';
import { guardKyselyExecutor, type ReadOnlyTransaction } from './kysely-guard.js';

export { ConnectionHeldError, type ReadOnlyTransaction } from './kysely-guard.js';

/**
 * Kysely, on any dialect: the delivery in `db.transaction().execute(...)`, the store's statements through
 * `executeQuery` of a raw compiled query. Inside a delivery of this store (`scope`), `db.transaction()` and
 * `db.startTransaction()` are refused (the handler's own transaction would commit apart from the delivery),
 * and so is a write through `db` beside `ctx.tx`; on a database of one connection (`oneConnection`:
 * SQLite) a query through `db` joins the delivery's transaction instead (see `guardKyselyExecutor`). Given
 * `readOnly`, what `db` sends during a delivery runs in a read-only transaction of its own, so the server
 * refuses a write the text check cannot see.
 *
 * @example
 * ```ts
 * const readOnly = { begin: 'begin read only', end: 'rollback' };
 * const { client, scope } = kyselyClient(db, 'KyselyStore', { oneConnection: false, readOnly });
 * ```
 */
export function kyselyClient<DB>(
  db: Kysely<DB>,
  store: string,
  { oneConnection, readOnly }: { oneConnection: boolean; readOnly?: ReadOnlyTransaction | undefined },
): { client: SqlClient<Transaction<DB>>; scope: object } {
  const scope = {};
  const own = refuseOwnTransactions(db, ['transaction', 'startTransaction'], scope, store);
  const held = guardKyselyExecutor(db as Kysely<unknown>, scope, store, { oneConnection, readOnly });
  const run = (executor: Kysely<DB>, statement: Statement) => {
    try {
      return answered(executor.executeQuery(CompiledQuery.raw(statement.sql, [...statement.values])));
    } catch (error) {
      return Promise.reject(error);
    }
  };
  return {
    scope,
    client: runThrough<Transaction<DB>, Kysely<DB>>(
      db,
      run,
      oneConnection
        ? // Noted while open, so a query of db sent during the delivery runs in it (see guardKyselyExecutor).
          (work) =>
            own.transaction().execute(async (tx) => {
              held.tx = tx as Transaction<unknown>;
              try {
                return await work(tx);
              } finally {
                held.tx = undefined;
              }
            })
        : (work) => own.transaction().execute(work),
      [],
    ),
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
