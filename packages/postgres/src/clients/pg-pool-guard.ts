import { clientGuard, wrapMethod } from '@service-pay/core/node';
import { type Checkout, checkoutDelivery, guardPoolQueries, type QueryJudge, statementRefusal } from '@service-pay/sql';
import type { Pool, PoolClient } from 'pg';

/**
 * Refuses, during a delivery of a store given `pool`, the writes and own transactions the handler sends
 * beside `ctx.tx` through the app's node-postgres pool: `pool.query(...)`, and a client of `pool.connect()`
 * (`BEGIN`, a write). A statement is judged by the async context that issued it, at the call: `pool.query`
 * before it queues (pg-pool runs a queued request in the context of whoever released a connection, so a
 * plain request queued behind a delivery is never taken for it), a checked-out client's `query` at each
 * call, except on the connection the store checked out for the delivery itself (`ctx.tx`'s). Reads pass.
 * Only public methods of the instance given are wrapped (`query`, `connect`), once per pool.
 *
 * @example
 * ```ts
 * guardPgPool(pool, scope, 'KyselyStore');
 * ```
 */
export function guardPgPool(pool: Pool, scope: object, store: string): void {
  const guard = clientGuard(pool, scope, store);
  const checkouts = new WeakMap<PoolClient, Checkout>();
  const checkout = guardPoolQueries(pool, guard, ['query'], judge);

  wrapMethod(pool, 'connect', (original, args) => {
    const kind = checkout();
    const mark = (client: PoolClient | undefined) => {
      if (client === undefined) return;
      checkouts.set(client, kind);
      wrapClient(client);
    };
    const callback = args[0];
    if (typeof callback === 'function') {
      return original((error: unknown, client: PoolClient | undefined, done: unknown) => {
        mark(client);
        callback(error, client, done);
      });
    }
    return (original() as Promise<PoolClient>).then((client) => {
      mark(client);
      return client;
    });
  });

  const wrappedClients = new WeakSet<PoolClient>();
  const wrapClient = (client: PoolClient) => {
    if (wrappedClients.has(client)) return;
    wrappedClients.add(client);
    const original = client.query;
    Object.defineProperty(client, 'query', {
      configurable: true,
      writable: true,
      value: function query(this: unknown, ...args: unknown[]) {
        const inside = checkoutDelivery(checkouts.get(client), guard);
        const refused = judge(inside, args, "a client of pool.connect()'s query");
        if (refused !== undefined) return refused.answer;
        return (original as (...a: unknown[]) => unknown).apply(this, args);
      },
    });
  };
}

/**
 * The refusal of a pg `query(...)` call made in a delivery, answered as node-postgres answers (the
 * callback's error, or a rejected promise), or undefined to let it run.
 */
const judge: QueryJudge = (inside, args, via) => {
  if (inside === undefined) return undefined;
  const first = args[0] as { text?: unknown } | string | null;
  const error = statementRefusal(inside.store, typeof first === 'string' ? first : first?.text, via);
  if (error === undefined) return undefined;
  const refused = inside.delivery.refuse(error);
  const callback = args[args.length - 1];
  if (typeof callback === 'function') {
    queueMicrotask(() => callback(error));
    return { answer: undefined };
  }
  return { answer: refused };
};
