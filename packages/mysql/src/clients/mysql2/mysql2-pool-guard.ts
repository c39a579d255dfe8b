import { type ClientGuard, clientGuard, OwnTransactionError, refusedValue, wrapMethod } from '@service-pay/core/node';
import {
  answeredCallback,
  type Checkout,
  callerBound,
  checkoutDelivery,
  guardPoolQueries,
  isReadOnlyRefusal,
  type QuerySend,
  type RunningDelivery,
  serverRefusal,
  statementKind,
  statementRefusal,
} from '@service-pay/sql';
import { READ_ONLY_PREFIX, readOnlyStatement, sqlTextOf } from '../read-only-statement.js';

type Callback = (error: unknown, ...rest: unknown[]) => void;
type Method = (...args: unknown[]) => unknown;

/**
 * The callback pool under a mysql2 pool of either flavour: a promise pool (`mysql2/promise`) keeps it as
 * its public `pool`; a callback pool is it.
 *
 * @example
 * ```ts
 * const core = corePoolOf(db.$client);
 * ```
 */
export function corePoolOf(pool: unknown): object | undefined {
  const candidate = pool as { getConnection?: unknown; query?: unknown; pool?: unknown } | null;
  if (candidate === null || typeof candidate !== 'object') return undefined;
  const inner = candidate.pool as { getConnection?: unknown; query?: unknown } | null | undefined;
  if (inner !== null && typeof inner === 'object' && typeof inner.getConnection === 'function') return inner;
  return typeof candidate.getConnection === 'function' && typeof candidate.query === 'function' ? candidate : undefined;
}

/**
 * Refuses, during a delivery of a store given the mysql2 pool `core` (the callback pool; a promise pool's
 * is its `pool`), the writes and own transactions the handler sends beside `ctx.tx`: through
 * `pool.query` / `pool.execute` (judged at the call, before the request can queue behind the delivery's
 * own connection), and through a connection of `pool.getConnection()` (`query`, `execute`, `prepare` and
 * its statements' `execute`, `beginTransaction()`), judged at each call except on the connection the store
 * checked out for the delivery itself. Only what is plainly a read passes the text check, and it runs
 * read-only on MariaDB (`SET STATEMENT tx_read_only=1 FOR`, one statement, nothing outliving it): a
 * function that writes fails there, and that failure becomes `WriteOutsideTransactionError`. Each
 * callback given runs in its caller's async context. Both flavours go through the callback pool's
 * methods, wrapped once on that instance. A refusal is the callback's error (a promise pool's rejection).
 *
 * @example
 * ```ts
 * guardMysql2Pool(corePoolOf(pool), scope, 'MySqlStore');
 * ```
 */
export function guardMysql2Pool(core: object, scope: object, store: string): void {
  const guard = clientGuard(core, scope, store);
  const checkouts = new WeakMap<object, Checkout>();
  const wrapped = new WeakSet<object>();
  const send: QuerySend = (inside, args, original, via) => sendStatement(inside, args, original, via);
  const checkout = guardPoolQueries(core, guard, ['query', 'execute'], send);

  wrapMethod(core, 'getConnection', (original, args) => {
    const kind = checkout();
    const callback = callerBound(args)[0] as Callback;
    return original((error: unknown, connection: object | undefined) => {
      if (connection !== undefined && connection !== null) {
        checkouts.set(connection, kind);
        if (!wrapped.has(connection)) {
          wrapped.add(connection);
          guardConnection(connection, guard, checkouts);
        }
      }
      callback(error, connection);
    });
  });
}

/**
 * A `query` / `execute` in a delivery (`inside`), or outside one as it was: refused unless plainly a read
 * (a `COMMIT` or `ROLLBACK` passes as it is), a read sent read-only, its server refusal mapped.
 */
function sendStatement(inside: RunningDelivery | undefined, args: unknown[], original: Method, via: string): unknown {
  if (inside === undefined) return original(...args);
  const text = sqlTextOf(args[0]);
  const refused = judge(inside, text, args, via);
  if (refused !== undefined) return refused.answer;
  if (statementKind(text, 'mysql') === 'end') return original(...args);
  const readOnly = [readOnlyStatement(args[0]), ...args.slice(1)];
  const callback = answeredCallback(readOnly, mapped(inside, text, via));
  if (callback === undefined) return original(...readOnly);
  inside.delivery.hold(callback.answered);
  return original(...callback.args);
}

/** The server's read-only error for a statement sent in `inside`, as the delivery's refusal. */
function mapped(inside: RunningDelivery, text: unknown, via: string): (error: unknown) => unknown {
  return (error) => {
    if (!isReadOnlyRefusal(error)) return error;
    const refusal = serverRefusal(inside.store, text, via);
    void inside.delivery.refuse(refusal);
    return refusal;
  };
}

/**
 * `query`, `execute`, `prepare` and `beginTransaction` of a pooled connection, judged when the app checked
 * it out; each callback bound to its caller's context.
 */
function guardConnection(connection: object, guard: ClientGuard, checkouts: WeakMap<object, Checkout>): void {
  const target = connection as Record<string, unknown>;
  for (const method of ['query', 'execute', 'prepare', 'beginTransaction']) {
    const original = target[method];
    if (typeof original !== 'function') continue;
    target[method] = function guarded(this: unknown, ...given: unknown[]) {
      const args = callerBound(given);
      const inside = checkoutDelivery(checkouts.get(connection), guard);
      const call = (...a: unknown[]) => (original as Method).apply(this, a);
      const via = `a connection of pool.getConnection()'s ${method}`;
      if (method === 'beginTransaction') {
        const refused = refuseBegin(inside, args);
        return refused !== undefined ? refused.answer : call(...args);
      }
      if (method !== 'prepare') return sendStatement(inside, args, call, via);
      return prepare(inside, args, call, via, () => checkoutDelivery(checkouts.get(connection), guard));
    };
  }
}

/**
 * `prepare` on an app's connection: in a delivery, refused unless plainly a read, prepared read-only; the
 * statement it hands back has its `execute` judged at each call (a statement prepared before the delivery
 * and not read-only is refused in it: the server would not refuse its writes).
 */
function prepare(
  inside: RunningDelivery | undefined,
  args: unknown[],
  call: Method,
  via: string,
  during: () => RunningDelivery | undefined,
): unknown {
  const text = sqlTextOf(args[0]);
  if (inside !== undefined) {
    const refused = judge(inside, text, args, via);
    if (refused !== undefined) return refused.answer;
  }
  const first = inside === undefined ? args[0] : readOnlyStatement(args[0]);
  const last = args.length - 1;
  const callback = args[last];
  if (typeof callback !== 'function') return call(first, ...args.slice(1));
  const rest = args.slice(1, last);
  // MariaDB judges a prepared `SET STATEMENT` at once: a function that writes is refused at `prepare`.
  const map = inside === undefined ? (error: unknown) => error : mapped(inside, text, via);
  return call(first, ...rest, (error: unknown, statement: unknown) => {
    if (statement !== null && typeof statement === 'object') guardStatement(statement, during);
    (callback as Callback)(error == null ? error : map(error), statement);
  });
}

/** A prepared statement's `execute`, judged in the delivery running when it is called. */
function guardStatement(statement: object, during: () => RunningDelivery | undefined): void {
  const target = statement as { execute?: unknown; query?: unknown };
  const original = target.execute;
  if (typeof original !== 'function' || (original as { guarded?: true }).guarded) return;
  const execute = function execute(this: unknown, ...given: unknown[]) {
    const args = callerBound(given);
    const inside = during();
    if (inside === undefined) return (original as Method).apply(this, args);
    const text = target.query;
    const via = 'a prepared statement’s execute';
    const readOnly = typeof text === 'string' && text.startsWith(READ_ONLY_PREFIX);
    const error = readOnly
      ? undefined
      : (statementRefusal(inside.store, text, via, 'mysql') ??
        serverRefusal(inside.store, text, `${via} (prepared before the delivery)`));
    if (error !== undefined) return answer(inside.delivery.refuse(error), args).answer;
    const callback = answeredCallback(args, mapped(inside, text, via));
    if (callback === undefined) return (original as Method).apply(this, args);
    inside.delivery.hold(callback.answered);
    return (original as Method).apply(this, callback.args);
  };
  (execute as { guarded?: true }).guarded = true;
  target.execute = execute;
}

function refuseBegin(inside: RunningDelivery | undefined, args: unknown[]): { answer: unknown } | undefined {
  if (inside === undefined) return undefined;
  return answer(inside.delivery.refuse(new OwnTransactionError(inside.store, 'beginTransaction()')), args);
}

/** The refusal of a mysql2 `query` / `execute` made in a delivery for what is not plainly a read. */
function judge(inside: RunningDelivery, text: unknown, args: unknown[], via: string): { answer: unknown } | undefined {
  const error = statementRefusal(inside.store, text, via, 'mysql');
  if (error === undefined) return undefined;
  return answer(inside.delivery.refuse(error), args);
}

/** A refusal as mysql2's callback API answers: the callback's error on the next tick. */
function answer(refused: Promise<never>, args: unknown[]): { answer: unknown } {
  const callback = [...args].reverse().find((arg) => typeof arg === 'function') as Callback | undefined;
  const query = args[0] as { onResult?: unknown } | null;
  const onResult = typeof query?.onResult === 'function' ? (query.onResult as Callback) : undefined;
  const report = callback ?? onResult;
  if (report !== undefined) refused.catch((error: unknown) => process.nextTick(() => report(error)));
  return { answer: refusedValue(refused) };
}
