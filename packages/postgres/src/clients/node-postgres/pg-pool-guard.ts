import { clientGuard, wrapMethod } from '@service-pay/core/node';
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
import type { Pool, PoolClient } from 'pg';

type Query = (...args: unknown[]) => unknown;

/**
 * Refuses, during a delivery of a store given `pool`, the writes and own transactions the handler sends
 * beside `ctx.tx` through the app's node-postgres pool: `pool.query(...)`, and a client of `pool.connect()`.
 * Only what is plainly a read passes the text check, and it then runs in a transaction of its own that the
 * server keeps read-only (`BEGIN READ ONLY`, the statement, `ROLLBACK`, queued together on one connection,
 * so nothing of the mode outlives it, behind PgBouncer's transaction pooling too): a function that writes,
 * or anything the text check cannot see, fails on the server, and that failure becomes
 * `WriteOutsideTransactionError`. A statement is judged by the async context that issued it, at the call
 * (`pool.query` before it queues: pg-pool runs a queued request in the context of whoever released a
 * connection), and each callback given runs in its caller's context. The store's own connection for the
 * delivery (`ctx.tx`'s) is never judged. Only public methods of the instance given are wrapped (`query`,
 * `connect`), once per pool, and of the clients it hands out (`query`).
 *
 * @example
 * ```ts
 * guardPgPool(pool, scope, 'KyselyStore');
 * ```
 */
export function guardPgPool(pool: Pool, scope: object, store: string): void {
  const guard = clientGuard(pool, scope, store);
  const checkouts = new WeakMap<PoolClient, Checkout>();

  const send: QuerySend = (inside, args, original, via) => {
    const text = textOf(args[0]);
    const refused = refusal(inside, text, args, via);
    if (refused !== undefined) return refused.answer;
    if (inside === undefined || statementKind(text, 'postgres') === 'end') return original(...args);
    return readOnlyOnPool(pool, inside as RunningDelivery, args, via);
  };
  const checkout = guardPoolQueries(pool, guard, ['query'], send);

  wrapMethod(pool, 'connect', (original, args) => {
    const kind = checkout();
    const mark = (client: PoolClient | undefined) => {
      if (client === undefined) return;
      checkouts.set(client, kind);
      wrapClient(client);
    };
    const callback = callerBound(args)[0];
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
    const original = client.query as Query;
    Object.defineProperty(client, 'query', {
      configurable: true,
      writable: true,
      value: function query(this: unknown, ...args: unknown[]) {
        const bound = callerBound(args);
        const inside = checkoutDelivery(checkouts.get(client), guard);
        if (inside === undefined) return original.apply(this, bound);
        const text = textOf(bound[0]);
        const via = "a client of pool.connect()'s query";
        const refused = refusal(inside, text, bound, via);
        if (refused !== undefined) return refused.answer;
        if (statementKind(text, 'postgres') === 'end') return original.apply(this, bound);
        return readOnlyOnClient(client, original, bound, inside, via);
      },
    });
  };
}

/** The SQL text of a pg `query` call's first argument: a string, or a config's or Query object's `text`. */
function textOf(first: unknown): unknown {
  return typeof first === 'string' ? first : (first as { text?: unknown } | null)?.text;
}

/** A Query, Cursor or QueryStream object: the client drives it, and it reports its error to `handleError`. */
function isSubmittable(first: unknown): first is { submit: unknown; handleError?: Query } {
  return typeof first === 'object' && first !== null && typeof (first as { submit?: unknown }).submit === 'function';
}

/**
 * The refusal of a pg `query(...)` call made in a delivery for what is not plainly a read, answered as
 * node-postgres answers (the callback's error, or a rejected promise), or undefined to let it run.
 */
function refusal(
  inside: RunningDelivery | undefined,
  text: unknown,
  args: unknown[],
  via: string,
): { readonly answer: unknown } | undefined {
  if (inside === undefined) return undefined;
  const error = statementRefusal(inside.store, text, via, 'postgres');
  if (error === undefined) return undefined;
  const refused = inside.delivery.refuse(error);
  const callback = args[args.length - 1];
  if (typeof callback === 'function') {
    queueMicrotask(() => callback(error));
    return { answer: undefined };
  }
  return { answer: refused };
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
 * Runs a read on a checked-out client in a read-only transaction of its own: `BEGIN READ ONLY`, the
 * statement as the app wrote it (a promise, a callback or a submittable: its answer is the app's), and
 * `ROLLBACK`, queued together (the client sends them in order), so the read costs two more round trips
 * and no wait in between. The delivery's commit waits for the answer, so a write the server refused is
 * the delivery's failure even when the handler never awaited it.
 */
function readOnlyOnClient(
  client: PoolClient,
  query: Query,
  args: unknown[],
  inside: RunningDelivery,
  via: string,
): unknown {
  const run = (...a: unknown[]) => query.apply(client, a);
  void (run('BEGIN READ ONLY') as Promise<unknown>).catch(() => {});
  const map = mapped(inside, textOf(args[0]), via);
  let result: unknown;
  const callback = answeredCallback(args, map);
  const first = args[0];
  if (callback !== undefined) {
    result = run(...callback.args);
    inside.delivery.hold(callback.answered);
  } else if (isSubmittable(first)) {
    const handleError = first.handleError;
    if (typeof handleError === 'function') {
      first.handleError = function mappedError(this: unknown, error: unknown, ...rest: unknown[]) {
        return handleError.call(this, map(error), ...rest);
      };
    }
    result = run(...args);
  } else {
    result = (run(...args) as Promise<unknown>).then(undefined, (error: unknown) => {
      throw map(error);
    });
    inside.delivery.hold(result as Promise<unknown>);
  }
  void (run('ROLLBACK') as Promise<unknown>).catch(() => {});
  return result;
}

/**
 * `pool.query(...)` of a read in a delivery: a connection of the pool (checked out as `pool.query` would,
 * so its statements are not judged again), the read in a read-only transaction of its own on it, and the
 * connection released once that transaction has ended (dropped if the ROLLBACK failed).
 */
function readOnlyOnPool(pool: Pool, inside: RunningDelivery, args: unknown[], via: string): unknown {
  const last = args[args.length - 1];
  const callback = typeof last === 'function' ? (last as (error: unknown, result?: unknown) => void) : undefined;
  const statement = callback === undefined ? args : args.slice(0, -1);
  const map = mapped(inside, textOf(statement[0]), via);
  const answer = new Promise<unknown>((resolve, reject) => {
    (pool.connect as unknown as Query)((error: unknown, client: PoolClient, release: (error?: unknown) => void) => {
      if (error) return reject(error);
      const run = (...a: unknown[]) => (client.query as unknown as Query).apply(client, a);
      void (run('BEGIN READ ONLY') as Promise<unknown>).catch(() => {});
      const result = run(...statement) as Promise<unknown> | undefined;
      if (typeof result?.then === 'function') result.then(resolve, reject);
      else resolve(result);
      (run('ROLLBACK') as Promise<unknown>).then(
        () => release(),
        (failure: unknown) => release(failure instanceof Error ? failure : new Error(String(failure))),
      );
    });
  }).then(undefined, (error: unknown) => {
    throw map(error);
  });
  inside.delivery.hold(answer);
  if (callback === undefined) return answer;
  answer.then(
    (result) => callback(undefined, result),
    (error: unknown) => callback(error),
  );
  return undefined;
}
