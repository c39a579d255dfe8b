import { MARIADB_READ_ONLY_PREFIX } from '@service-pay/sql';

/** The prefix that runs one statement read-only on MariaDB (see `MARIADB_READ_ONLY_PREFIX`). */
export const READ_ONLY_PREFIX = MARIADB_READ_ONLY_PREFIX;

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
