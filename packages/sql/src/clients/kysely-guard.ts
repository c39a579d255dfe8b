import { type ClientGuard, clientGuard } from '@service-pay/core/node';
import type { Kysely } from 'kysely';
import { statementRefusal } from '../statement-kind.js';

/**
 * The error a query through the app's Kysely instance gets during a delivery on a database of one
 * connection (SQLite): the delivery's transaction holds that connection, so the query would wait for the
 * delivery to end, the handler would wait for the query, and the delivery would hang until its deadline.
 * Code `CONNECTION_HELD_BY_DELIVERY`.
 *
 * @example
 * ```ts
 * if (error instanceof ConnectionHeldError) console.error('read through ctx.tx');
 * ```
 */
export class ConnectionHeldError extends Error {
  /** Stable code for logs and tests. */
  readonly code = 'CONNECTION_HELD_BY_DELIVERY';

  constructor(store: string, via: string) {
    super(
      `${store}: onPaymentPaid sent a query through the app's own db (${via}) while the delivery's ` +
        "transaction holds the database's only connection: it would wait for the delivery, which waits for " +
        'it. Send it through ctx.tx instead (reads and writes alike): it is the same connection, in the ' +
        "delivery's transaction.",
    );
    this.name = 'ConnectionHeldError';
  }
}

/** Executor methods that answer another executor on the same connections (`withSchema`, `withPlugin`). */
const DERIVING = ['withPlugin', 'withPluginAtFront', 'withoutPlugins'] as const;

/**
 * Refuses, during a delivery of a store given `db`, what the handler sends through the app's Kysely
 * instance beside `ctx.tx`: a write (`WriteOutsideTransactionError`) and, on a database of one connection
 * (`oneConnection`: SQLite, where the delivery's transaction holds it), any query (`ConnectionHeldError`),
 * which would otherwise wait for the delivery and hang it until its deadline, then commit on its own. Judged
 * at the call, in the context that made it, through the public executor of `db` (`db.getExecutor()`, whose
 * `executeQuery` every builder's `execute()` calls) and the executors derived from it (`db.withSchema()`,
 * `withPlugin`): wrapped once per executor instance, nothing of Kysely's internals. `ctx.tx` runs on an
 * executor of its own and is never judged here. Reads on a pool pass.
 *
 * @example
 * ```ts
 * guardKyselyExecutor(db, scope, 'KyselyStore', { oneConnection: false });
 * ```
 */
export function guardKyselyExecutor(
  db: Kysely<unknown>,
  scope: object,
  store: string,
  { oneConnection }: { oneConnection: boolean },
): void {
  const executor = db.getExecutor();
  const guard = clientGuard(executor, scope, store);
  // Every store given this db shares the executor's guard; its methods are wrapped once.
  if (guard.firstWrap('executor')) guardExecutor(executor, guard, oneConnection);
}

/**
 * Wraps the executor's public methods as own properties. A derived executor (`withSchema`) is judged by
 * the guard of the `db` it came from, so it knows every store given that `db`.
 */
function guardExecutor(executor: object, guard: ClientGuard, oneConnection: boolean): void {
  /** Set while the original `executeQuery` asks for its connection, which it does synchronously. */
  let judged = false;

  wrapOwn(executor, 'executeQuery', (original, args) => {
    const refused = refusal(guard, args[0], oneConnection, 'db');
    if (refused !== undefined) return refused;
    judged = true;
    try {
      return original(...args);
    } finally {
      judged = false;
    }
  });

  // What does not go through executeQuery (`stream()`, `db.connection()`) still needs a connection: on one
  // connection that is the delivery's own, so it is refused as a query would be.
  wrapOwn(executor, 'provideConnection', (original, args) => {
    if (!judged && oneConnection) {
      const refused = refusal(guard, undefined, oneConnection, 'db.connection() or stream()');
      if (refused !== undefined) return refused;
    }
    return original(...args);
  });

  for (const method of DERIVING) {
    wrapOwn(executor, method, (original, args) => {
      const derived = original(...args);
      if (derived !== null && typeof derived === 'object') guardExecutor(derived, guard, oneConnection);
      return derived;
    });
  }
}

/** Replaces `target[method]` by an own property calling `wrapper` with the original bound to `this`. */
function wrapOwn(
  target: object,
  method: string,
  wrapper: (original: (...args: unknown[]) => unknown, args: unknown[]) => unknown,
): void {
  const original = (target as Record<string, unknown>)[method];
  if (typeof original !== 'function') return;
  Object.defineProperty(target, method, {
    configurable: true,
    writable: true,
    value: function guarded(this: unknown, ...args: unknown[]) {
      return wrapper((...a: unknown[]) => (original as (...b: unknown[]) => unknown).apply(this, a), args);
    },
  });
}

/** The rejected promise a query of the app's `db` gets in a delivery, or undefined to let it run. */
function refusal(guard: ClientGuard, query: unknown, oneConnection: boolean, via: string): Promise<never> | undefined {
  if (guard.storeWork()) return undefined;
  const inside = guard.running();
  if (inside === undefined) return undefined;
  const text = (query as { sql?: unknown } | null | undefined)?.sql;
  const error =
    statementRefusal(inside.store, text, via) ??
    (oneConnection ? new ConnectionHeldError(inside.store, via) : undefined);
  return error === undefined ? undefined : inside.delivery.refuse(error);
}
