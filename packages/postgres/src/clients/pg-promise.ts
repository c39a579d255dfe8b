import { clientGuard, refuseOwnTransactions, wrapMethod } from '@service-pay/core/node';
import { resultOf, type SqlClient, type Statement, statementRefusal } from '@service-pay/sql';
import type { IBaseProtocol, IDatabase, ITask } from 'pg-promise';

/** What the store runs a statement through: the delivery's transaction, or the app's `db` outside one. */
type Executor = Pick<IBaseProtocol<unknown>, 'result'>;

/** The methods of a pg-promise task that take SQL text first: BEGIN/COMMIT/ROLLBACK through them are refused. */
const RAW_TEXT_METHODS = [
  'query',
  'none',
  'one',
  'many',
  'oneOrNone',
  'manyOrNone',
  'any',
  'result',
  'multiResult',
  'multi',
  'each',
  'map',
] as const;

/**
 * The app's `db` methods that check a connection out of the pool and answer a promise. The pool's guard
 * judges their statements once the connection arrives, later than the call: during a delivery the store
 * waits for each before it commits, so a refusal there fails the delivery even when the handler never
 * awaited the call. A statement given as text is judged at the call too, before the method asks the pool
 * for a connection: on a pool the delivery's own connection has emptied, a write would otherwise wait for
 * that connection while the delivery waited for the write, until the handler's deadline.
 */
const HELD_METHODS = [...RAW_TEXT_METHODS, 'func', 'proc', 'task', 'taskIf', 'connect'] as const;

/** The text a pg-promise query method was given: a string, or a parameterized query's `text`. */
function textOf(method: string, args: unknown[]): string | undefined {
  const first = args[0];
  // `db.proc(name, values)` sends `call name(...)`: a procedure, never plainly a read.
  if (method === 'proc') return typeof first === 'string' ? `call ${first}(...)` : undefined;
  if (!(RAW_TEXT_METHODS as readonly string[]).includes(method)) return undefined;
  if (typeof first === 'string') return first;
  const text = (first as { text?: unknown } | null)?.text;
  return typeof text === 'string' ? text : undefined;
}

/**
 * pg-promise: the delivery in the app's own `db.tx(...)`, so `ctx.tx` is the pg-promise transaction its
 * users know (`ctx.tx.none(...)`, `ctx.tx.one(...)`, and `ctx.tx.tx(...)` is a savepoint, as pg-promise
 * nests transactions), and the store's statements go through its `result(...)`. pg-promise sends BEGIN on
 * its own before the callback, so a fresh delivery costs BEGIN, the claim, the credit and COMMIT (4 round
 * trips; node-postgres' store sends BEGIN with the claim: 3). During a delivery of this store (`scope`),
 * `db.tx()` and `db.txIf()` on the `db` given are refused (`OwnTransactionError`): a transaction of the
 * handler's own would commit apart from the delivery. Statements through `db` are judged by the guard on
 * its pool (`guardPgPool` on `db.$pool`, pg-promise's documented pool): pg-promise checks a connection out
 * of it for every query and task, and the delivery waits for what the handler sent through `db`.
 *
 * @example
 * ```ts
 * const { client, scope } = pgPromiseClient(db, 'PgPromiseStore');
 * guardPgPool(db.$pool as unknown as Pool, scope, 'PgPromiseStore');
 * ```
 */
export function pgPromiseClient<Ext>(
  db: IDatabase<Ext>,
  store: string,
): { client: SqlClient<ITask<Ext> & Ext>; scope: object } {
  const scope = {};
  const own = refuseOwnTransactions(db, ['tx', 'txIf'], scope, store, { tx: 'db.tx()', txIf: 'db.txIf()' });
  const guard = clientGuard(db, scope, store);
  for (const method of HELD_METHODS) {
    wrapMethod(db, method, (original, args) => {
      const inside = guard.storeWork() ? undefined : guard.running();
      if (inside === undefined) return original(...args);
      const text = textOf(method, args);
      const refused = text === undefined ? undefined : statementRefusal(inside.store, text, `db.${method}`, 'postgres');
      if (refused !== undefined) return inside.delivery.refuse(refused);
      const answer = original(...args);
      if (answer instanceof Promise) inside.delivery.hold(answer);
      return answer;
    });
  }
  const run = (executor: Executor, statement: Statement) =>
    // No values: the text goes as written (pg-promise formats only what it is given values for), by the
    // simple protocol. The PostgreSQL dialect writes its values in, so this is every statement of the store's.
    executor
      .result(statement.values.length === 0 ? statement.sql : { text: statement.sql, values: [...statement.values] })
      .then(resultOf);
  return {
    scope,
    client: {
      transaction: (work) => own.tx((tx) => work(tx)),
      query: run,
      queryOutside: (statement) => run(db, statement),
      rawTextMethods: RAW_TEXT_METHODS,
    },
  };
}

/**
 * Whether `value` is a pg-promise database object (`pgp(connection)`), by its public shape: its pool, its
 * transactions and its query methods. A task or transaction (`t` of `db.tx(t => ...)`) has no `$pool`.
 *
 * @example
 * ```ts
 * if (!isPgPromiseDatabase(options.db)) throw new TypeError('PgPromiseStore: options.db must be ...');
 * ```
 */
export function isPgPromiseDatabase(value: unknown): value is IDatabase<unknown> {
  const db = value as Partial<IDatabase<unknown>> | null;
  return (
    typeof db === 'object' &&
    db !== null &&
    typeof db.tx === 'function' &&
    typeof db.result === 'function' &&
    typeof db.$pool?.connect === 'function'
  );
}
