import type { StorePoolState } from '@service-pay/core';
import { type ClientGuard, clientGuard, OwnTransactionError, wrapMethod } from '@service-pay/core/node';
import {
  type Checkout,
  checkoutDelivery,
  guardPoolQueries,
  isReadOnlyRefusal,
  type RunningDelivery,
  serverRefusal,
  statementKind,
  statementRefusal,
} from '@service-pay/sql';
import { readOnlyStatement, sqlTextOf } from '../read-only-statement.js';

/**
 * What the store uses of a pool of the `mariadb` driver (`mariadb.createPool(...)`, the pool
 * `@prisma/adapter-mariadb` runs on when given one: `new PrismaMariaDb(pool)`): its promise API and its
 * public counters.
 *
 * @example
 * ```ts
 * const pool: MariaDbPoolLike = mariadb.createPool({ host, user, database, connectionLimit: 10 });
 * ```
 */
export interface MariaDbPoolLike {
  getConnection(): Promise<unknown>;
  query(sql: unknown, values?: unknown): Promise<unknown>;
  execute(sql: unknown, values?: unknown): Promise<unknown>;
  batch(sql: unknown, values?: unknown): Promise<unknown>;
  totalConnections(): number;
  activeConnections(): number;
  taskQueueSize(): number;
}

/**
 * True for a `mariadb` promise pool (a mysql2 pool has no `taskQueueSize`, a callback pool of `mariadb`
 * answers through callbacks, which the guard does not speak).
 *
 * @example
 * ```ts
 * if (!isMariaDbPool(options.pool)) throw new TypeError('options.pool must be a mariadb pool');
 * ```
 */
export function isMariaDbPool(value: unknown): value is MariaDbPoolLike {
  const pool = value as Partial<Record<keyof MariaDbPoolLike, unknown>> | null;
  return (
    typeof pool === 'object' &&
    pool !== null &&
    ['getConnection', 'query', 'execute', 'batch', 'totalConnections', 'activeConnections', 'taskQueueSize'].every(
      (method) => typeof pool[method as keyof MariaDbPoolLike] === 'function',
    ) &&
    // The promise pool's getConnection takes no callback (the callback pool's takes one).
    (pool.getConnection as (...args: unknown[]) => unknown).length === 0
  );
}

/**
 * Refuses, during a delivery of a store given the `mariadb` pool, the writes and own transactions the
 * handler sends beside `ctx.tx` through the app's own client on that pool (Prisma's `prisma.x.create`):
 * `pool.query` / `execute` / `batch`, judged at the call before the request can queue behind the delivery's
 * own connection, and the statements on a connection of `pool.getConnection()`, judged at each call except
 * on the connection the store checked out for the delivery itself (`ctx.tx`'s). On such a connection
 * `beginTransaction()` is refused as an own transaction, but a `BEGIN` sent as text passes: Prisma opens a
 * transaction of its own for one `create` or `update` on MySQL (the write, then a read of the row), and for
 * some reads; what matters is a write inside it, which is refused. Reads pass. A refusal is a rejected
 * promise, recorded on the delivery. Only public methods of the pool instance and of the connections it
 * hands out are wrapped.
 *
 * @example
 * ```ts
 * guardMariaDbPool(pool, scope, 'PrismaStore');
 * ```
 */
export function guardMariaDbPool(pool: MariaDbPoolLike, scope: object, store: string): void {
  const guard = clientGuard(pool, scope, store);
  const checkout = guardPoolQueries(pool, guard, ['query', 'execute', 'batch'], (inside, args, original, via) =>
    inside === undefined ? original(...args) : send(inside, args, original, via),
  );
  wrapMethod(pool, 'getConnection', (original, args) => {
    const kind = checkout();
    // A checkout the app makes in a delivery (Prisma's own transaction for one `create`) holds the
    // delivery's commit until its first statement is judged, so that a write there fails the delivery
    // even when the handler never awaited it.
    let judged = () => {};
    const app = typeof kind === 'object' ? kind.app : undefined;
    app?.delivery.hold(new Promise<void>((resolve) => (judged = resolve)));
    // The driver hands out a new connection object at each checkout: its guard holds this checkout's kind.
    return (original(...args) as Promise<object>).then(
      (connection) => {
        guardConnection(connection, guard, kind, judged);
        return connection;
      },
      (error: unknown) => {
        judged();
        throw error;
      },
    );
  });
}

/**
 * `query`, `execute`, `batch` and `beginTransaction` of one checkout, judged when the app made it;
 * `judged()` once its first statement past a `BEGIN` is judged, or it goes back to the pool.
 */
function guardConnection(connection: object, guard: ClientGuard, kind: Checkout, judged: () => void): void {
  if (kind === 'store' || kind === 'judged') return;
  const target = connection as Record<string, unknown>;
  for (const method of ['query', 'execute', 'batch', 'beginTransaction', 'release', 'end', 'destroy']) {
    const original = target[method];
    if (typeof original !== 'function') continue;
    Object.defineProperty(connection, method, {
      configurable: true,
      writable: true,
      value: function guarded(this: unknown, ...args: unknown[]) {
        const inside = checkoutDelivery(kind, guard);
        if (method === 'release' || method === 'end' || method === 'destroy') judged();
        else if (method === 'beginTransaction') {
          judged();
          if (inside !== undefined) {
            return inside.delivery.refuse(new OwnTransactionError(inside.store, 'beginTransaction()'));
          }
        } else if (inside !== undefined) {
          const call = (...a: unknown[]) => (original as (...a: unknown[]) => unknown).apply(this, a);
          const kind = statementKind(sqlTextOf(args[0]), 'mysql');
          // Prisma opens a transaction of its own for one `create` or `update`: in a delivery it is opened
          // read-only, so a write inside it fails on the server, however it is spelled.
          if (
            kind === 'transaction' &&
            /^\s*(?:begin|start\s+transaction)\s*;?\s*$/i.test(String(sqlTextOf(args[0])))
          ) {
            return call('START TRANSACTION READ ONLY', ...args.slice(1));
          }
          const answer = send(inside, args, call, `a connection of pool.getConnection()'s ${method}`);
          judged();
          return answer;
        }
        return (original as (...a: unknown[]) => unknown).apply(this, args);
      },
    });
  }
}

/**
 * A `mariadb` promise call made in a delivery: refused unless plainly a read (a `COMMIT` or `ROLLBACK`
 * passes as it is), a read sent read-only, the server's read-only error answered as the delivery's
 * refusal; the delivery's commit waits for the answer.
 */
function send(
  inside: RunningDelivery,
  args: unknown[],
  original: (...args: unknown[]) => unknown,
  via: string,
): unknown {
  const text = sqlTextOf(args[0]);
  const error = statementRefusal(inside.store, text, via, 'mysql');
  if (error !== undefined) return inside.delivery.refuse(error);
  if (statementKind(text, 'mysql') === 'end') return original(...args);
  const answer = (original(readOnlyStatement(args[0]), ...args.slice(1)) as Promise<unknown>).then(
    undefined,
    (failure: unknown) => {
      if (!isReadOnlyRefusal(failure)) throw failure;
      const refusal = serverRefusal(inside.store, text, via);
      void inside.delivery.refuse(refusal);
      throw refusal;
    },
  );
  inside.delivery.hold(answer);
  return answer;
}

/**
 * A `mariadb` pool's state from its public counters. The driver shows no public limit on connections:
 * the connections it has open stand for it, which is the limit whenever callers wait (the only time the
 * state is asked for, after a `begin` timed out).
 *
 * @example
 * ```ts
 * describeMariaDbPool(pool); // { size: 10, inUse: 10, waiting: 2 }
 * ```
 */
export function describeMariaDbPool(pool: MariaDbPoolLike): StorePoolState {
  return { size: pool.totalConnections(), inUse: pool.activeConnections(), waiting: pool.taskQueueSize() };
}
