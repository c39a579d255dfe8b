/**
 * What makes one statement run read-only on MariaDB: `SET STATEMENT tx_read_only=1 FOR`, in a comment
 * only MariaDB runs (`/*M!`), so the statement is one round trip as before and nothing of the mode
 * outlives it on the connection. A write inside it (a function that inserts, whatever the text hid) fails
 * with `ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION` (1792). MySQL reads the prefix as a comment: there only
 * the text check holds.
 */
export const READ_ONLY_PREFIX = '/*M!100300 SET STATEMENT tx_read_only=1 FOR */ ';

/**
 * The first argument of a mysql2 or `mariadb` `query` / `execute` / `prepare` call made read-only: a
 * string prefixed, an options object copied with its `sql` prefixed, a Query command (made for this
 * call) given its prefixed `sql`.
 *
 * @example
 * ```ts
 * connection.query(readOnlyStatement('select credit(?)'), [id]); // refused by MariaDB: 1792
 * ```
 */
export function readOnlyStatement(first: unknown): unknown {
  if (typeof first === 'string') return READ_ONLY_PREFIX + first;
  if (typeof first !== 'object' || first === null) return first;
  const sql = (first as { sql?: unknown }).sql;
  if (typeof sql !== 'string' || sql.startsWith(READ_ONLY_PREFIX)) return first;
  if (Object.getPrototypeOf(first) === Object.prototype) return { ...first, sql: READ_ONLY_PREFIX + sql };
  (first as { sql: string }).sql = READ_ONLY_PREFIX + sql;
  return first;
}

/** The SQL text of a call's first argument: a string, or an object's `sql`. */
export function sqlTextOf(first: unknown): unknown {
  return typeof first === 'string' ? first : (first as { sql?: unknown } | null | undefined)?.sql;
}
