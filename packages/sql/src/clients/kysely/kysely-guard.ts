import { AsyncResource } from 'node:async_hooks';
import { asStoreWork, type ClientGuard, clientGuard, OwnTransactionError, wrapMethod } from '@service-pay/core/node';
import { CompiledQuery, type DatabaseConnection, type Kysely, type Transaction } from 'kysely';
import { isReadOnlyRefusal, serverRefusal, statementRefusal } from '../../guard/statement-kind.js';

/**
 * The error what cannot join the delivery's transaction gets, when sent through the app's Kysely instance
 * during a delivery on a database of one connection (SQLite): a `stream()` or `db.connection()` needs the
 * connection itself, which the delivery's transaction holds, so it would wait for the delivery while the
 * handler waits for it, until the delivery's deadline. Code `CONNECTION_HELD_BY_DELIVERY`.
 *
 * @example
 * ```ts
 * if (error instanceof ConnectionHeldError) console.error('run it through ctx.tx');
 * ```
 */
export class ConnectionHeldError extends Error {
  /** Stable code for logs and tests. */
  readonly code = 'CONNECTION_HELD_BY_DELIVERY';

  constructor(store: string, via: string) {
    super(
      `${store}: onPaymentPaid asked the app's own db for its connection (${via}) while the delivery's ` +
        "transaction holds the database's only connection: it would wait for the delivery, which waits for " +
        "it. Run it through ctx.tx instead: it is the same connection, in the delivery's transaction.",
    );
    this.name = 'ConnectionHeldError';
  }
}

/** Statements that begin or end a transaction (a savepoint's ROLLBACK TO is the handler's own business). */
const CONTROLS = /^[\s(]*(begin|start\s+transaction|commit|end|rollback(?!\s+to\b))\b/i;

/** Executor methods that answer another executor on the same connections (`withSchema`, `withPlugin`). */
const DERIVING = ['withPlugin', 'withPluginAtFront', 'withoutPlugins'] as const;

/**
 * On one connection, the delivery's transaction open on it (at most one at a time there), per `db`: what
 * a query of `db` sent during that delivery runs in.
 */
export interface HeldConnection {
  tx: Transaction<unknown> | undefined;
}

const heldConnections = new WeakMap<object, HeldConnection>();

/**
 * Guards the app's Kysely instance given to a store, through its public executor (`db.getExecutor()`, whose
 * `executeQuery` every builder's `execute()` calls, judged at the call, in the context that made it) and
 * the executors derived from it (`db.withSchema()`, `withPlugin`), each wrapped once as own properties,
 * nothing of Kysely's internals. `ctx.tx` runs on an executor of its own and is never judged here.
 *
 * During a delivery of a store given `db`, a statement through `db` that opens or ends a transaction is
 * refused (`OwnTransactionError`), and:
 * - on a pool (`oneConnection: false`), a write is refused (`WriteOutsideTransactionError`): it would commit
 *   apart from the delivery; reads pass;
 * - on one connection (SQLite), every other query joins the delivery's transaction, as a statement on a
 *   better-sqlite3 connection does: left to Kysely it would wait for the connection the delivery holds, hang
 *   the handler until its deadline, then run on its own and commit what the delivery rolled back. What cannot
 *   join (`stream()`, `db.connection()`) is refused (`ConnectionHeldError`).
 *
 * - given `readOnly` (on a pool), what passes runs in a read-only transaction of its own on the connection
 *   the executor hands out (see `runReadOnly`).
 *
 * Answers where the store notes the transaction it holds open (one connection only).
 *
 * @example
 * ```ts
 * const held = guardKyselyExecutor(db, scope, 'KyselyStore', { oneConnection: true });
 * await own.transaction().execute(async (tx) => { held.tx = tx; ... });
 * ```
 */
export function guardKyselyExecutor(
  db: Kysely<unknown>,
  scope: object,
  store: string,
  { oneConnection, readOnly }: { oneConnection: boolean; readOnly?: ReadOnlyTransaction | undefined },
): HeldConnection {
  const executor = db.getExecutor();
  const guard = clientGuard(executor, scope, store);
  let held = heldConnections.get(executor);
  if (held === undefined) {
    held = { tx: undefined };
    heldConnections.set(executor, held);
    // Every store given this db shares the executor's guard and its one wrapping.
    guardExecutor(executor, guard, oneConnection ? held : undefined, oneConnection ? undefined : readOnly);
  }
  return held;
}

/**
 * The statements that open and end a transaction the server keeps read-only, for a database whose Kysely
 * dialect speaks them (PostgreSQL: `begin read only` and `rollback`).
 */
export interface ReadOnlyTransaction {
  readonly begin: string;
  readonly end: string;
}

/**
 * Makes every connection the executor hands out during a delivery (to a query, a `stream()`, a
 * `db.connection()`) run its work in a read-only transaction of its own: `begin`, the work, `end`, on that
 * one connection, so a write the text check cannot see (a function that inserts) fails on the server, and
 * that failure becomes `WriteOutsideTransactionError` naming `ctx.tx`, recorded on the delivery. The
 * connection is taken as the store's own work (a pool guard under the dialect does not judge it a second
 * time), the work runs in its caller's context, and the connection goes back with the transaction ended,
 * so nothing of the mode outlives it. Only the executor's public `provideConnection` is wrapped.
 */
function runReadOnly(executor: object, guard: ClientGuard, readOnly: ReadOnlyTransaction): void {
  const begin = CompiledQuery.raw(readOnly.begin);
  const end = CompiledQuery.raw(readOnly.end);
  wrapMethod(executor, 'provideConnection', (original, args) => {
    const inside = guard.storeWork() ? undefined : guard.running();
    const consumer = args[0];
    if (inside === undefined || typeof consumer !== 'function') return original(...args);
    const work = AsyncResource.bind(consumer as (connection: DatabaseConnection) => Promise<unknown>);
    const answer = asStoreWork(() =>
      original(
        async (connection: DatabaseConnection) => {
          await connection.executeQuery(begin);
          try {
            return await work(connection);
          } finally {
            await connection.executeQuery(end);
          }
        },
        ...args.slice(1),
      ),
    ) as Promise<unknown>;
    const mapped = answer.then(undefined, (error: unknown) => {
      if (!isReadOnlyRefusal(error)) throw error;
      const refusal = serverRefusal(inside.store, readSql(error), 'db');
      void inside.delivery.refuse(refusal);
      throw refusal;
    });
    inside.delivery.hold(mapped);
    return mapped;
  });
}

/** The statement a server error names, when the driver kept it (for the refusal's message). */
function readSql(error: unknown): unknown {
  return (error as { query?: unknown } | null)?.query ?? 'a statement';
}

/**
 * Wraps the executor's public methods as own properties. A derived executor (`withSchema`) is judged by the
 * guard of the `db` it came from, so it knows every store given that `db`.
 */
function guardExecutor(
  executor: object,
  guard: ClientGuard,
  held: HeldConnection | undefined,
  readOnly: ReadOnlyTransaction | undefined,
): void {
  if (readOnly !== undefined) runReadOnly(executor, guard, readOnly);
  /** Set while the original `executeQuery` asks for its connection, which it does synchronously. */
  let judged = false;

  wrapMethod(executor, 'executeQuery', (original, args) => {
    const inside = guard.storeWork() ? undefined : guard.running();
    if (inside !== undefined) {
      const text = (args[0] as { sql?: unknown } | null | undefined)?.sql;
      if (held !== undefined && typeof text === 'string' && CONTROLS.test(text)) {
        // Joined, it would begin, commit or roll back the delivery's own transaction.
        const head = text.trim().split(/\s+/).slice(0, 2).join(' ');
        return inside.delivery.refuse(new OwnTransactionError(inside.store, `db with ${head}`));
      }
      if (held === undefined) {
        const error = statementRefusal(inside.store, text, 'db');
        if (error !== undefined) return inside.delivery.refuse(error);
      } else if (held.tx !== undefined) {
        const join = held.tx.getExecutor().executeQuery as (...a: unknown[]) => unknown;
        return join.apply(held.tx.getExecutor(), args);
      }
    }
    judged = true;
    try {
      return original(...args);
    } finally {
      judged = false;
    }
  });

  if (held !== undefined) {
    wrapMethod(executor, 'provideConnection', (original, args) => {
      const inside = judged || guard.storeWork() ? undefined : guard.running();
      if (inside !== undefined && held.tx !== undefined) {
        return inside.delivery.refuse(new ConnectionHeldError(inside.store, 'stream() or db.connection()'));
      }
      return original(...args);
    });
  }

  for (const method of DERIVING) {
    wrapMethod(executor, method, (original, args) => {
      const derived = original(...args);
      if (derived !== null && typeof derived === 'object') guardExecutor(derived, guard, held, readOnly);
      return derived;
    });
  }
}
