import { type ClientGuard, clientGuard, OwnTransactionError, refusedValue, wrapMethod } from '@service-pay/core/node';
import {
  type Checkout,
  checkoutDelivery,
  guardPoolQueries,
  type QueryJudge,
  type RunningDelivery,
  statementRefusal,
} from '@service-pay/sql';

type Callback = (error: unknown, ...rest: unknown[]) => void;

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
 * own connection), and through a connection of `pool.getConnection()` (`beginTransaction()`, a write),
 * judged at each call except on the connection the store checked out for the delivery itself. Both
 * flavours go through the callback pool's methods, wrapped once on that instance. Reads pass; a refusal
 * is the callback's error (a promise pool's rejection).
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
  const checkout = guardPoolQueries(core, guard, ['query', 'execute'], judge);

  wrapMethod(core, 'getConnection', (original, args) => {
    const kind = checkout();
    const callback = args[0] as Callback;
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

/** `query`, `execute` and `beginTransaction` of a pooled connection, judged when the app checked it out. */
function guardConnection(connection: object, guard: ClientGuard, checkouts: WeakMap<object, Checkout>): void {
  const target = connection as Record<string, unknown>;
  for (const method of ['query', 'execute', 'beginTransaction']) {
    const original = target[method];
    if (typeof original !== 'function') continue;
    target[method] = function guarded(this: unknown, ...args: unknown[]) {
      const inside = checkoutDelivery(checkouts.get(connection), guard);
      const refused =
        method === 'beginTransaction'
          ? refuseBegin(inside, args)
          : judge(inside, args, `a connection of pool.getConnection()'s ${method}`);
      if (refused !== undefined) return refused.answer;
      return (original as (...a: unknown[]) => unknown).apply(this, args);
    };
  }
}

function refuseBegin(inside: RunningDelivery | undefined, args: unknown[]): { answer: unknown } | undefined {
  if (inside === undefined) return undefined;
  return answer(inside.delivery.refuse(new OwnTransactionError(inside.store, 'beginTransaction()')), args);
}

/** The refusal of a mysql2 `query` / `execute` made in a delivery, or undefined to let it run. */
const judge: QueryJudge = (inside, args, via) => {
  if (inside === undefined) return undefined;
  const first = args[0] as { sql?: unknown } | string | null;
  const error = statementRefusal(inside.store, typeof first === 'string' ? first : first?.sql, via);
  if (error === undefined) return undefined;
  return answer(inside.delivery.refuse(error), args);
};

/** A refusal as mysql2's callback API answers: the callback's error on the next tick. */
function answer(refused: Promise<never>, args: unknown[]): { answer: unknown } {
  const callback = [...args].reverse().find((arg) => typeof arg === 'function') as Callback | undefined;
  const query = args[0] as { onResult?: unknown } | null;
  const onResult = typeof query?.onResult === 'function' ? (query.onResult as Callback) : undefined;
  const report = callback ?? onResult;
  if (report !== undefined) refused.catch((error: unknown) => process.nextTick(() => report(error)));
  return { answer: refusedValue(refused) };
}
