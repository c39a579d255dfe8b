import { DEFAULT_TABLE_NAME, type InboxTableName, quotedTableName, type SqlStoreOptions } from '../../table-name.js';

/**
 * The inbox table's name, checked once and quoted for SQL. Accepts `name` or `schema.name`, each part a
 * plain identifier (letters, digits, `_`, `$`; not starting with a digit; at most 63 bytes, PostgreSQL's
 * limit). Parts are double-quoted, so the name is used exactly as given: `Inbox` and `inbox` differ.
 */
export interface TableName extends InboxTableName {
  /** Quoted, schema-qualified name of its claim function (lock and read in one round trip; see inbox-sql.ts). */
  readonly claimFunctionSql: string;
  /**
   * Quoted, schema-qualified name of its take function (lock, write the row or read it, in one round trip):
   * `<table>_take_v2`. The first version, `<table>_take`, answered a record; a function cannot change its
   * result type in place, and processes of an earlier version still call that one during a rolling upgrade,
   * so the second has a name of its own (both take the same lock: they exclude each other).
   */
  readonly takeFunctionSql: string;
}

const RULES = { qualifier: 'schema', maxLength: 63 } as const;

/**
 * The claim functions' names after their table's: one place, for the names `migrate()` gives them and the
 * names an error about a missing one uses and matches.
 */
export const CLAIM_FUNCTION_SUFFIX = '_claim';
export const TAKE_FUNCTION_SUFFIX = '_take_v2';

/**
 * Checks and quotes a table name; throws a `TypeError` naming `store` that says what is wrong.
 *
 * @example
 * ```ts
 * tableName('billing.service_pay_inbox', 'PostgresStore').sql; // "billing"."service_pay_inbox"
 * ```
 */
export function tableName(value: unknown = DEFAULT_TABLE_NAME, store = 'PostgresStore'): TableName {
  const { name, sql, table, qualified } = quotedTableName(value, store, RULES, (part) => `"${part}"`);
  // 63 bytes at most, as PostgreSQL would cut it anyway (with a notice).
  const cut = (suffix: string) => `${table.slice(0, RULES.maxLength - suffix.length)}${suffix}`;
  return {
    name,
    sql,
    // Indexes live in their table's schema: named bare.
    createdAtIndexSql: `"${cut('_created_at_idx')}"`,
    paymentIdIndexSql: `"${cut('_payment_id_idx')}"`,
    claimFunctionSql: qualified(cut(CLAIM_FUNCTION_SUFFIX)),
    takeFunctionSql: qualified(cut(TAKE_FUNCTION_SUFFIX)),
  };
}

/**
 * The options of the ORM stores on PostgreSQL beside their client: the inbox table (`schema.name`) and `autoMigrate`.
 *
 * @example
 * ```ts
 * const options: PostgresTableOptions = { tableName: 'billing.service_pay_inbox', autoMigrate: false };
 * ```
 */
export interface PostgresTableOptions extends SqlStoreOptions {
  /** `name` or `schema.name`; default `service_pay_inbox` (the same table as `PostgresStore`'s). */
  tableName?: string | undefined;
}
