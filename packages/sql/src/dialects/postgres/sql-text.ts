/**
 * SQL text for values the store must put into a statement itself: the begin and commit statements are sent
 * as one simple-protocol message each (several statements, one round trip), and that protocol has no
 * parameters. Everything else goes through bound parameters.
 */

/** NUL (refused), a quote, a backslash, a question mark (see quoteLiteral). */
const NEEDS_CARE = /[\0'\\?]/;

/**
 * A string as a PostgreSQL literal, correct whatever `standard_conforming_strings` is: quotes doubled, and
 * backslashes doubled inside an `E''` literal (what node-postgres' `escapeLiteral` does).
 *
 * @example
 * ```ts
 * quoteLiteral("o'k"); // 'o''k'
 * quoteLiteral('a\\b'); //  E'a\\\\b'
 * quoteLiteral('why?'); //  E'why\\x3f'
 * ```
 */
export function quoteLiteral(value: string): string {
  // One scan for the common case, a value with none of the four characters that need care: five values of
  // every delivery's claim are quoted, and four `includes` were four passes over each (icount).
  if (!NEEDS_CARE.test(value)) return `'${value}'`;
  if (value.includes('\0')) throw new TypeError('PostgresStore: a text value cannot contain a NUL character.');
  const escaped = value.replaceAll("'", "''");
  if (!value.includes('\\') && !value.includes('?')) return `'${escaped}'`;
  // A question mark is written as an escape: Knex turns every bare `?` of a raw statement into a parameter.
  return ` E'${escaped.replaceAll('\\', '\\\\').replaceAll('?', '\\x3f')}'`;
}

/** A nullable string as a literal or `NULL`. */
export function quoteNullable(value: string | null | undefined): string {
  return value === undefined || value === null ? 'NULL' : quoteLiteral(value);
}
