import type { StorePoolState } from '@service-pay/core';

/** A result row as the clients hand them back. */
export type Row = Record<string, unknown>;

/**
 * One statement and its bound values. The dialect writes the text in its own parameter style (`?` on
 * MySQL and SQLite); the PostgreSQL dialect writes its values in as literals, so its `values` are empty
 * and the text runs as it is through any client's raw query.
 */
export interface Statement {
  readonly sql: string;
  readonly values: readonly unknown[];
  /** A write whose count matters (`prune`): clients with a separate API for writes (Prisma) use it. */
  readonly write?: true;
}

/** What one statement answered: its rows (none for a write) and how many rows it changed. */
export interface StatementResult {
  readonly rows: Row[];
  readonly affected: number;
}

/**
 * How statements reach the database and how a transaction opens and ends, for one client (Kysely, Drizzle,
 * Prisma, Knex, TypeORM, ...). One file per client maps these onto the client's public API, whatever SQL
 * the database speaks: the dialect (`SqlDialect`) writes the statements.
 *
 * @example
 * ```ts
 * const client: SqlClient<Knex.Transaction> = {
 *   transaction: (work) => knex.transaction(work),
 *   query: (tx, s) => knexResult(tx.raw(s.sql, s.values)),
 *   queryOutside: (s) => knexResult(knex.raw(s.sql, s.values)),
 *   rawTextMethods: ['raw'],
 * };
 * ```
 */
export interface SqlClient<Tx> {
  /**
   * Opens the client's own interactive transaction around `work` (`db.transaction().execute(work)`, ...):
   * the transaction commits when `work` resolves and rolls back when it rejects.
   */
  transaction(work: (tx: Tx) => Promise<void>): PromiseLike<unknown>;
  /** Runs one statement in `tx`. */
  query(tx: Tx, statement: Statement): Promise<StatementResult>;
  /** Runs one statement outside any delivery (autocommit), on a connection of the client's pool. */
  queryOutside(statement: Statement): Promise<StatementResult>;
  /** Names of `tx`'s methods that take SQL text first (checked for BEGIN/COMMIT/ROLLBACK). */
  readonly rawTextMethods: readonly string[];
  /**
   * Optional: `tx` as the handler sees it, for a client whose transaction object the generic guard does not
   * fit: a bare connection with calls of its own to refuse (mysql2's `commit()`, node-postgres'
   * `release()`), or callers that expect a refusal as a rejection or a callback's error (node-postgres,
   * PGlite). Given, it is the whole guard: it refuses every statement once `ended()` says the delivery is
   * over, and any statement that would end the transaction.
   */
  guard?(tx: Tx, ended: () => boolean): Tx;
  /**
   * Optional: the client's connection pool now, from its public counters; asked only after a `begin`
   * timed out, so a full pool is logged as such (core's `StorePoolFullError`).
   */
  describePool?(): StorePoolState | undefined;
  /**
   * Optional, for a database of one connection (PGlite): whether a transaction of the client holds it now.
   * `begin` then answers in-progress at once instead of queueing behind it (it may run until the handler's
   * deadline), and a rollback interrupts nothing: there is no other connection to send it from.
   */
  busy?(): boolean;
}

/** A statement without values. */
export function statement(sql: string): Statement {
  return { sql, values: [] };
}

/**
 * A client's answer as rows and a count, whatever shape it has: an array of rows (postgres.js, Prisma,
 * TypeORM), `{ rows, rowCount }` (node-postgres, Knex on pg), `{ rows, numAffectedRows }` (Kysely), or
 * mysql2's `[rows, fields]` / `[header]` with `affectedRows` (Drizzle and Knex on MySQL).
 */
export function resultOf(answer: unknown): StatementResult {
  let value = answer;
  if (Array.isArray(value) && value.length === 2 && (Array.isArray(value[0]) || isHeader(value[0]))) {
    value = value[0];
  }
  if (Array.isArray(value)) return { rows: value as Row[], affected: value.length };
  const object = (value ?? {}) as {
    rows?: unknown;
    rowCount?: unknown;
    numAffectedRows?: unknown;
    affectedRows?: unknown;
    changes?: unknown;
  };
  const rows = Array.isArray(object.rows) ? (object.rows as Row[]) : [];
  const count = object.rowCount ?? object.numAffectedRows ?? object.affectedRows ?? object.changes;
  return { rows, affected: count === undefined || count === null ? rows.length : Number(count) };
}

/**
 * A statement's answer as rows and a count (`read`, by default `resultOf`), through the query's own `then`:
 * one reaction, where an async function awaiting the query made two promises more per statement (and with
 * async hooks on, as the delivery guards turn them on, each promise pays them too). `query` is what the
 * client's call returned (a promise, or a thenable that sends the query when its `then` is called); a call
 * that throws is the caller's to answer as a rejection.
 *
 * @example
 * ```ts
 * const run = (db: Kysely<DB>, s: Statement) => answered(db.executeQuery(CompiledQuery.raw(s.sql, [...s.values])));
 * ```
 */
export function answered<T = StatementResult>(
  query: PromiseLike<unknown>,
  read: (answer: unknown) => T = resultOf as (answer: unknown) => T,
): Promise<T> {
  const result = query.then(read);
  // A client's own thenable may answer another thenable: callers get a promise either way.
  return result instanceof Promise ? result : Promise.resolve(result);
}

/** mysql2's result header for a write (`ResultSetHeader`). */
function isHeader(value: unknown): boolean {
  return typeof value === 'object' && value !== null && 'affectedRows' in value;
}

/**
 * The client of an ORM that runs a statement the same way on the delivery's transaction and on the app's
 * own database object (`app`), outside one: `run(executor, statement)`. The clients differ only in how they
 * open a transaction (`transaction`) and which of their methods take raw text (`rawTextMethods`).
 *
 * @example
 * ```ts
 * const client = runThrough(dataSource, run, (work) => own.transaction(work), ['query']);
 * ```
 */
export function runThrough<Tx, App>(
  app: App,
  run: (executor: Tx | App, statement: Statement) => Promise<StatementResult>,
  transaction: SqlClient<Tx>['transaction'],
  rawTextMethods: readonly string[],
): SqlClient<Tx> {
  return { transaction, query: run, queryOutside: (statement) => run(app, statement), rawTextMethods };
}
