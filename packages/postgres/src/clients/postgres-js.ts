import { resultOf, type SqlClient, type Statement } from '@service-pay/sql';
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
  };
}
