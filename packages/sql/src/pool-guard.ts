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
 * A client's judge of one query call: the refusal as the client answers it (a rejected promise, or its
 * callback's error) when `inside` names a delivery and the statement is a write or opens a transaction,
 * else undefined to let the call run.
 */
export type QueryJudge = (
  inside: RunningDelivery | undefined,
  args: unknown[],
  via: string,
) => { readonly answer: unknown } | undefined;

/**
 * For a pool guard: wraps the pool's query `methods` (`query`, `execute`, ...) once on the instance, each
 * judged by `judge` in the async context that made the call, before the request can queue behind a
 * delivery's own connection (a pool runs a queued request in the context of whoever released a connection,
 * so a plain request queued behind a delivery is never taken for it). Returns how a connection the pool
 * checks out now is to be judged: a pool whose query method checks one out through its public checkout
 * (node-postgres' `connect`, mysql2's `getConnection`) marks it already judged.
 *
 * @example
 * ```ts
 * const checkout = guardPoolQueries(pool, guard, ['query'], judge);
 * wrapMethod(pool, 'connect', (original) => original().then((client) => mark(client, checkout())));
 * ```
 */
export function guardPoolQueries(
  pool: object,
  guard: ClientGuard,
  methods: readonly string[],
  judge: QueryJudge,
): () => Checkout {
  /** Set while an original query method runs: it may check a connection out synchronously. */
  let insideQuery = false;
  for (const method of methods) {
    wrapMethod(pool, method, (original, args) => {
      const refused = judge(guard.running(), args, `pool.${method}`);
      if (refused !== undefined) return refused.answer;
      insideQuery = true;
      try {
        return original(...args);
      } finally {
        insideQuery = false;
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
