import { DEFAULT_TABLE_NAME, type InboxTableName, quotedTableName, type SqlStoreOptions } from '../../table-name.js';

/**
 * The inbox table's name, checked once and quoted for SQL: `name`, or `schema.name` for an attached
 * database. Each part a plain identifier (letters, digits, `_`; not starting with a digit; at most 64
 * characters). Parts are double-quoted, so the name is used exactly as given.
 */
export type TableName = InboxTableName;

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
  const { name, sql, table, qualified } = quotedTableName(value, store, RULES, (part) => `"${part}"`);
  // An index lives in its table's schema: `"schema"."index"` (SQLite's syntax), and is created ON the bare table.
  return {
    name,
    sql,
    createdAtIndexSql: qualified(`${table}_created_at_idx`),
    paymentIdIndexSql: qualified(`${table}_payment_id_idx`),
  };
}

/**
 * The options of the ORM stores on SQLite beside their client: the inbox table (in an attached database's
 * schema or not) and `autoMigrate`.
 *
 * @example
 * ```ts
 * const options: SqliteTableOptions = { tableName: 'main.service_pay_inbox' };
 * ```
 */
export interface SqliteTableOptions extends SqlStoreOptions {
  /** `name` or `schema.name` of an attached database; default `service_pay_inbox`. */
  tableName?: string | undefined;
}
