import { clientGuard, wrapMethod } from '@service-pay/core/node';
import type { SqlClient } from '@service-pay/sql';
import type { Kysely, Transaction } from 'kysely';

const opened = new WeakMap<object, { tx?: Transaction<unknown> | undefined }>();

/**
 * Makes a query the handler sends through the app's Kysely instance on SQLite during a delivery join the
 * delivery's transaction, as a statement on a better-sqlite3 connection does. Kysely's SQLite dialect is
 * one connection behind a lock that the delivery's transaction holds: left alone, such a query would wait
 * for the delivery to end (an awaited one until the handler's deadline, after which it would run on its
 * own and commit a credit the delivery rolled back, which the retry would write again). Joined, it is
 * committed or rolled back with the delivery: one credit. Only `executeQuery` of the instance
 * `db.getExecutor()` answers is wrapped, an own property: every builder of `db`, and `db.executeQuery`,
 * run through it before they take the lock, and a transaction's executor is another instance. Kysely's
 * typings mark `getExecutor` internal; it is the one place db's statements can be seen before that lock.
 * Returns `client` noting the transaction it holds open.
 *
 * @example
 * ```ts
 * const joined = joinDeliveries(db, kyselyClient(db, 'KyselyStore'), 'KyselyStore');
 * ```
 */
export function joinDeliveries<DB>(
  db: Kysely<DB>,
  { client, scope }: { client: SqlClient<Transaction<DB>>; scope: object },
  store: string,
): SqlClient<Transaction<DB>> {
  const executor = db.getExecutor();
  const guard = clientGuard(executor, scope, store);
  // One connection: at most one transaction of the stores on it is open at a time (oneConnection's gate),
  // noted per executor, since the method is wrapped once however many stores share the db.
  let held = opened.get(executor);
  if (held === undefined) {
    const state: { tx?: Transaction<unknown> } = {};
    held = state;
    opened.set(executor, state);
    wrapMethod(executor, guard, 'executeQuery', (original, args) => {
      const tx = state.tx;
      if (tx === undefined || guard.running() === undefined) return original(...args);
      return (tx.getExecutor().executeQuery as (...a: unknown[]) => unknown)(...args);
    });
  }
  const state = held;
  return {
    ...client,
    transaction: (work) =>
      client.transaction(async (tx) => {
        state.tx = tx as Transaction<unknown>;
        try {
          await work(tx);
        } finally {
          state.tx = undefined;
        }
      }),
  };
}
