import { type ClientGuard, clientGuard, OwnTransactionError, refusedValue, wrapMethod } from '@service-pay/core/node';
import {
  resultOf,
  type SqlClient,
  type Statement,
  sayUnguarded,
  statementKind,
  statementRefusal,
} from '@service-pay/sql';
import type { Sql, TransactionSql } from 'postgres';
import { type ReadOnlyRun, readOnlyOnInstance, readOnlyOnReserved, readOnlyQuery } from './postgres-js-read-only.js';

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
 * `sql.reserve()`. The tagged template `sql\`...\`` is the instance's own call, which no method of it sees:
 * judged when the app's `sql` is made with `guardSql`, otherwise the store says once, at construction, that
 * it cannot be refused. A read passes, and runs in a read-only transaction of its own (the instance's
 * original `begin('read only', ...)`, or `begin read only` / `rollback` around it on a reserved connection),
 * so a write the text hid fails on the server and becomes `WriteOutsideTransactionError`. A refusal is a
 * rejected promise.
 *
 * @example
 * ```ts
 * guardPostgresJs(sql, scope, 'PostgresJsStore');
 * ```
 */
export function guardPostgresJs(sql: Sql, scope: object, store: string): void {
  const guard = clientGuard(sql, scope, store);
  guards.set(sql, guard);
  // Taken before `begin` is wrapped: the reads' own read-only transactions are opened through the original.
  if (!readOnlyRuns.has(sql)) readOnlyRuns.set(sql, readOnlyOnInstance(sql.begin.bind(sql) as never));
  const run = readOnlyRuns.get(sql) as ReadOnlyRun;
  const close = sql.CLOSE;
  guardCalls(sql, guard, 'sql', run, close);
  // A reserved connection is judged by the instance's guard, which knows every store given the instance.
  wrapMethod(sql, 'reserve', (original, args) =>
    (original(...args) as Promise<ReservedLike>).then((reserved) => {
      const onReserved = readOnlyOnReserved(reserved as never, reserved.unsafe.bind(reserved) as never);
      guardCalls(reserved, guard, 'a reserved connection', onReserved, close);
      return tagged.has(sql)
        ? judgedTemplate(reserved, guard, 'a reserved connection`...`', onReserved, close)
        : reserved;
    }),
  );
  if (tagged.has(sql)) return;
  sayUnguarded(
    sql,
    store,
    "writes through the app's sql`...` tagged template beside ctx.tx (sql.unsafe and sql.begin are refused)",
    "or make the app's instance with guardSql(postgres(url)) and give the store that one",
  );
}

/** What the guard uses of a reserved connection. */
interface ReservedLike {
  unsafe(...args: unknown[]): unknown;
}

/** Per instance: how its reads run read-only during a delivery (its original `begin('read only', ...)`). */
const readOnlyRuns = new WeakMap<object, ReadOnlyRun>();

/** The guard of each instance given to a store, for the tagged-template calls `guardSql` judges. */
const guards = new WeakMap<object, ClientGuard>();
/** Instances made by `guardSql`: their tagged template is judged, so the store has nothing to warn about. */
const tagged = new WeakSet<object>();

/**
 * The app's postgres.js instance with its tagged template judged too: `sql\`insert ...\`` sent beside
 * `ctx.tx` during a delivery of a store given this instance is refused (`WriteOutsideTransactionError`,
 * `OwnTransactionError` for `BEGIN`), judged at the call in the context that made it, as `sql.unsafe` is.
 * Reads pass, run in a read-only transaction of their own, and everywhere else it is the instance itself
 * (every property and helper, `sql(value)` calls included). The tagged template is the instance's own call, which no method of it can see: the guard has to
 * be the function the app calls, so make the app's `sql` with it and give the store that one.
 *
 * @example
 * ```ts
 * import postgres from 'postgres';
 * import { guardSql, PostgresJsStore } from '@service-pay/postgres/postgres-js';
 *
 * export const sql = guardSql(postgres(process.env.DATABASE_URL!)); // the app's sql, everywhere
 * const store = new PostgresJsStore({ sql });
 * ```
 */
export function guardSql<S extends Sql>(sql: S): S {
  const judged: S = new Proxy(sql, {
    apply(target, thisArg, args: unknown[]) {
      const guard = guards.get(judged);
      const run = readOnlyRuns.get(judged);
      if (guard === undefined || run === undefined) return Reflect.apply(target, thisArg, args);
      return judgeTemplate(guard, 'sql`...`', run, sql.CLOSE, args, () => Reflect.apply(target, thisArg, args));
    },
  });
  tagged.add(judged);
  return judged;
}

/**
 * A tagged-template call (`sql\`...\``) judged in the caller's delivery: refused unless plainly a read, a read
 * run read-only (`run`), anything else (not a template, no delivery, COMMIT / ROLLBACK) sent as it is.
 */
function judgeTemplate(
  guard: ClientGuard,
  via: string,
  run: ReadOnlyRun,
  close: unknown,
  args: unknown[],
  plain: () => unknown,
) {
  const strings = args[0] as { raw?: unknown } | undefined;
  const inside = Array.isArray(strings) && Array.isArray(strings.raw) ? guard.running() : undefined;
  if (inside === undefined) return plain();
  const text = (strings as readonly string[]).join('$1');
  const error = statementRefusal(inside.store, text, via);
  if (error !== undefined) return refusedValue(inside.delivery.refuse(error));
  if (statementKind(text, 'postgres') === 'end') return plain();
  return readOnlyQuery(inside, via, text, (t) => t(...(args as never[])) as never, plain as never, run, close);
}

/** A reserved connection of a `guardSql` instance, with its tagged template judged as the instance's is. */
function judgedTemplate<R extends object>(
  reserved: R,
  guard: ClientGuard,
  via: string,
  run: ReadOnlyRun,
  close: unknown,
): R {
  return new Proxy(reserved, {
    apply(target, thisArg, args: unknown[]) {
      return judgeTemplate(guard, via, run, close, args, () => Reflect.apply(target as never, thisArg, args));
    },
  });
}

/**
 * `begin` and `unsafe` of a postgres.js instance or reserved connection in a delivery: `begin` refused, a
 * statement through `unsafe` refused unless plainly a read, and a read run read-only (`run`).
 */
function guardCalls(target: object, guard: ClientGuard, name: string, run: ReadOnlyRun, close: unknown): void {
  wrapMethod(target, 'begin', (original, args) => {
    const inside = guard.running();
    if (inside === undefined) return original(...args);
    return refusedValue(inside.delivery.refuse(new OwnTransactionError(inside.store, `${name}.begin()`)));
  });
  wrapMethod(target, 'unsafe', (original, args) => {
    const inside = guard.running();
    if (inside === undefined) return original(...args);
    const via = `${name}.unsafe`;
    const error = statementRefusal(inside.store, args[0], via);
    if (error !== undefined) return refusedValue(inside.delivery.refuse(error));
    if (statementKind(args[0], 'postgres') === 'end') return original(...args);
    const build = (sql: (...a: never[]) => unknown) => (sql as unknown as ReservedLike).unsafe(...args) as never;
    return readOnlyQuery(inside, via, args[0], build, () => original(...args) as never, run, close);
  });
}
