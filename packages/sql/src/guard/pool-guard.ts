import { AsyncResource } from 'node:async_hooks';
import { type ClientGuard, wrapMethod } from '@service-pay/core/node';

/** A delivery of one of a client's stores, running in the caller's async context (`ClientGuard.running()`). */
export type RunningDelivery = NonNullable<ReturnType<ClientGuard['running']>>;

/**
 * How a pooled connection was checked out: by the store for a delivery (`ctx.tx`'s, never judged), by one
 * of the pool's own query methods (already judged at that call), or by the app, with the delivery it was
 * asked for in, if any. Such a connection stays that delivery's even if it arrives after the delivery ended
 * (it waited behind the delivery's own), so its writes stay refused.
 */
export type Checkout = 'store' | 'judged' | { readonly app: RunningDelivery | undefined };

/**
 * A client's handling of one query call during a delivery (`inside`) or outside one: the refusal as the
 * client answers it (a rejected promise, or its callback's error) for what is not plainly a read, the
 * read sent where the server refuses writes, or, outside a delivery, `original` called as it was.
 */
export type QuerySend = (
  inside: RunningDelivery | undefined,
  args: unknown[],
  original: (...args: unknown[]) => unknown,
  via: string,
) => unknown;

/**
 * The call's arguments with each function among them (a callback) bound to the caller's async context: a
 * pooled connection answers in the context of whoever opened it, so without this a callback given in a
 * delivery could run as a plain request (its write let through) and one given in a plain request could
 * run in a delivery (its write refused).
 *
 * @example
 * ```ts
 * return original(...callerBound(args));
 * ```
 */
export function callerBound(args: unknown[]): unknown[] {
  let bound: unknown[] | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (typeof arg !== 'function') continue;
    bound ??= [...args];
    bound[i] = AsyncResource.bind(arg as (...a: unknown[]) => unknown);
  }
  return bound ?? args;
}

/**
 * For pool guards: a promise that settles when the callback among `args` is called (the answer of a
 * callback-style query), with the arguments in which that callback is replaced by one that maps its error
 * first (`mapError`), or undefined when the call takes no callback.
 */
export function answeredCallback(
  args: unknown[],
  mapError: (error: unknown) => unknown,
): { args: unknown[]; answered: Promise<void> } | undefined {
  const last = args.length - 1;
  const callback = args[last];
  if (typeof callback !== 'function') return undefined;
  let settle: () => void = () => {};
  const answered = new Promise<void>((resolve) => (settle = resolve));
  const replaced = [...args];
  replaced[last] = function answer(this: unknown, error: unknown, ...rest: unknown[]) {
    settle();
    return (callback as (...a: unknown[]) => unknown).call(this, error == null ? error : mapError(error), ...rest);
  };
  return { args: replaced, answered };
}

/**
 * For a pool guard: wraps the pool's query `methods` (`query`, `execute`, ...) once on the instance, each
 * sent by `send` in the async context that made the call (its callbacks bound to that context), before
 * the request can queue behind a delivery's own connection (a pool runs a queued request in the context of
 * whoever released a connection, so a plain request queued behind a delivery is never taken for it).
 * Returns how a connection the pool checks out now is to be judged: a pool whose query method checks one
 * out through its public checkout (node-postgres' `connect`, mysql2's `getConnection`) marks it already
 * judged.
 *
 * @example
 * ```ts
 * const checkout = guardPoolQueries(pool, guard, ['query'], send);
 * wrapMethod(pool, 'connect', (original) => original().then((client) => mark(client, checkout())));
 * ```
 */
export function guardPoolQueries(
  pool: object,
  guard: ClientGuard,
  methods: readonly string[],
  send: QuerySend,
): () => Checkout {
  /** Set while an original query method runs: it may check a connection out synchronously. */
  let insideQuery = false;
  for (const method of methods) {
    wrapMethod(pool, method, (original, args) => {
      const bound = callerBound(args);
      const inside = guard.running();
      if (inside === undefined) {
        insideQuery = true;
        try {
          return original(...bound);
        } finally {
          insideQuery = false;
        }
      }
      const wasInside = insideQuery;
      insideQuery = true;
      try {
        return send(inside, bound, original, `pool.${method}`);
      } finally {
        insideQuery = wasInside;
      }
    });
  }
  // Decided at the checkout's call: a queued request is answered later, in the context of whoever released.
  return () => (insideQuery ? 'judged' : guard.storeWork() ? 'store' : { app: guard.running() });
}

/**
 * The delivery a statement on a checked-out connection is judged in: the one running now, else the one the
 * app checked the connection out in; none for the store's own connection or one a judged query took.
 *
 * @example
 * ```ts
 * const refused = judge(checkoutDelivery(checkouts.get(client), guard), args, "a client of pool.connect()'s query");
 * ```
 */
export function checkoutDelivery(checkout: Checkout | undefined, guard: ClientGuard): RunningDelivery | undefined {
  return typeof checkout === 'object' ? (guard.running() ?? checkout.app) : undefined;
}
