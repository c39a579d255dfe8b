import { type ClientGuard, clientGuard, OwnTransactionError, refusedValue, wrapMethod } from '@service-pay/core/node';
import { resultOf, type SqlClient, type Statement, sayUnguarded, statementRefusal } from '@service-pay/sql';
import type { Sql, TransactionSql } from 'postgres';

/**
 * postgres.js: the delivery in `sql.begin(...)`, `ctx.tx` its `TransactionSql`, the store's statements
 * through `unsafe` (values written in as literals by the PostgreSQL dialect).
 *
 * @example
 * ```ts
 * const client = postgresJsClient(sql);
 * ```
 */
export function postgresJsClient(sql: Sql): SqlClient<TransactionSql> {
  const run = async (executor: Sql | TransactionSql, statement: Statement) =>
    resultOf(await executor.unsafe(statement.sql, [...statement.values] as never[]));
  return {
    transaction: (work) => sql.begin(work),
    query: run,
    queryOutside: (statement) => run(sql, statement),
    rawTextMethods: ['unsafe'],
    // No describePool: postgres.js shows its limit (`sql.options.max`) but no public count of connections
    // in use or of queries waiting for one, so a full pool is logged as the store not answering in time.
  };
}

/**
 * True for a postgres.js instance (`postgres(url)`): a function with `unsafe` and `begin`.
 *
 * @example
 * ```ts
 * if (isPostgresJs(db.$client)) guardPostgresJs(db.$client, scope, 'DrizzleStore');
 * ```
 */
export function isPostgresJs(value: unknown): value is Sql {
  if (typeof value !== 'function') return false;
  const sql = value as unknown as { unsafe?: unknown; begin?: unknown };
  return typeof sql.unsafe === 'function' && typeof sql.begin === 'function';
}

/**
 * Refuses, during a delivery of a store given `sql`, what the handler sends through the app's postgres.js
 * instance beside `ctx.tx` that the instance lets us see: `sql.begin(...)` (`OwnTransactionError`), a write
 * through `sql.unsafe(...)` (`WriteOutsideTransactionError`), and the same through a connection of
 * `sql.reserve()`. The tagged template `sql\`...\`` is the instance itself, with no public hook: it cannot
 * be refused, and the store says so once, at construction. Reads pass; a refusal is a rejected promise.
 *
 * @example
 * ```ts
 * guardPostgresJs(sql, scope, 'PostgresJsStore');
 * ```
 */
export function guardPostgresJs(sql: Sql, scope: object, store: string): void {
  const guard = clientGuard(sql, scope, store);
  guardCalls(sql, guard, 'sql');
  wrapMethod(sql, guard, 'reserve', (original, args) =>
    (original(...args) as Promise<object>).then((reserved) => {
      guardCalls(reserved, clientGuard(reserved, scope, store), 'a reserved connection');
      return reserved;
    }),
  );
  sayUnguarded(
    sql,
    store,
    "writes through the app's sql`...` tagged template beside ctx.tx (sql.unsafe and sql.begin are refused)",
    'write through ctx.tx`...` only',
  );
}

/** `begin` and `unsafe` of a postgres.js instance or reserved connection, refused in a delivery. */
function guardCalls(target: object, guard: ClientGuard, name: string): void {
  wrapMethod(target, guard, 'begin', (original, args) => {
    const inside = guard.running();
    if (inside === undefined) return original(...args);
    return refusedValue(inside.delivery.refuse(new OwnTransactionError(inside.store, `${name}.begin()`)));
  });
  wrapMethod(target, guard, 'unsafe', (original, args) => {
    const inside = guard.running();
    const error = inside === undefined ? undefined : statementRefusal(inside.store, args[0], `${name}.unsafe`);
    if (inside === undefined || error === undefined) return original(...args);
    return refusedValue(inside.delivery.refuse(error));
  });
}
