import { endedError, nestedTransactionError, resultOf, type SqlClient, type Statement } from '@service-pay/sql';
import { endsPostgresTransaction } from '@service-pay/sql/postgres';
import type { PGliteLike, PGliteTransaction } from '../../pglite-types.js';

/**
 * Per PGlite instance, shared by every store on it: whether one of our transactions is open. PGlite is one
 * connection, so it runs one transaction at a time; everything else queues behind it.
 */
const busy = new WeakSet<object>();

/**
 * PGlite: a delivery's transaction is `pglite.transaction(...)`, `ctx.tx` its `Transaction`. A PGlite
 * database belongs to one process and has one connection, so a delivery transaction that is open holds the
 * only connection there is: another delivery answers in-progress at once (`busy`) instead of queueing
 * behind it, and the sender retries. On PGlite, deliveries of different payments do not run side by side
 * either.
 *
 * @example
 * ```ts
 * const client = pgliteClient(await PGlite.create(), 'PostgresStore');
 * ```
 */
export function pgliteClient(db: PGliteLike, store: string): SqlClient<PGliteTransaction> {
  const run = async (executor: PGliteLike | PGliteTransaction, statement: Statement) =>
    resultOf(await executor.query(statement.sql, [...statement.values]));
  return {
    async transaction(work) {
      busy.add(db);
      try {
        return await db.transaction(work);
      } finally {
        busy.delete(db);
      }
    },
    query: run,
    queryOutside: (statement) => run(db, statement),
    rawTextMethods: ['query', 'exec'],
    guard: (tx, ended) => guardTransaction(tx, ended, store),
    busy: () => busy.has(db),
  };
}

/**
 * PGlite's transaction as the handler sees it: refused (as a rejection) once ended, and not the handler's
 * to end or restart.
 */
function guardTransaction(raw: PGliteTransaction, ended: () => boolean, store: string): PGliteTransaction {
  const open = (text?: string) => {
    if (ended()) throw endedError(store);
    if (endsPostgresTransaction(text)) throw nestedTransactionError(store);
  };
  return {
    query: async (query, params, options) => {
      open(query);
      return await raw.query(query, params, options);
    },
    sql: async (strings, ...params) => {
      open(strings[0]);
      return await raw.sql(strings, ...params);
    },
    exec: async (query, options) => {
      open(query);
      return await raw.exec(query, options);
    },
    rollback: async () => {
      throw new Error(`${store}: throw from onPaymentPaid to roll back; ctx.tx.rollback() is the store’s.`);
    },
    listen: async (channel, callback) => {
      open();
      return await raw.listen(channel, callback);
    },
    get closed() {
      return ended();
    },
  };
}
