import { DEFAULT_TABLE_NAME, tableNameParts } from '../../table-name.js';

/**
 * The inbox table's name, checked once and quoted for SQL: `name`, or `schema.name` for an attached
 * database. Each part a plain identifier (letters, digits, `_`; not starting with a digit; at most 64
 * characters). Parts are double-quoted, so the name is used exactly as given.
 */
export interface TableName {
  /** As given, e.g. `service_pay_inbox`. */
  readonly name: string;
  /** Quoted for SQL, e.g. `"service_pay_inbox"`. */
  readonly sql: string;
  /** Quoted names of its indexes (in the table's schema). */
  readonly createdAtIndexSql: string;
  readonly paymentIdIndexSql: string;
}

const RULES = { qualifier: 'schema', maxLength: 64 } as const;

/**
 * Checks and quotes a table name; throws a `TypeError` naming `store` that says what is wrong.
 *
 * @example
 * ```ts
 * tableName('main.service_pay_inbox', 'SqliteStore').sql; // "main"."service_pay_inbox"
 * ```
 */
export function tableName(value: unknown = DEFAULT_TABLE_NAME, store = 'SqliteStore'): TableName {
  const parts = tableNameParts(value, store, RULES);
  const quoted = parts.map((part) => `"${part}"`);
  const table = parts[parts.length - 1] as string;
  // An index lives in its table's schema: `"schema"."index"` (SQLite's syntax), and is created ON the bare table.
  const index = (suffix: string) => [...quoted.slice(0, -1), `"${table}${suffix}"`].join('.');
  return {
    name: parts.join('.'),
    sql: quoted.join('.'),
    createdAtIndexSql: index('_created_at_idx'),
    paymentIdIndexSql: index('_payment_id_idx'),
  };
}
