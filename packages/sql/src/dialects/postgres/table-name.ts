import { DEFAULT_TABLE_NAME, tableNameParts } from '../../table-name.js';

/**
 * The inbox table's name, checked once and quoted for SQL. Accepts `name` or `schema.name`, each part a
 * plain identifier (letters, digits, `_`, `$`; not starting with a digit; at most 63 bytes, PostgreSQL's
 * limit). Parts are double-quoted, so the name is used exactly as given: `Inbox` and `inbox` differ.
 */
export interface TableName {
  /** As given, e.g. `billing.service_pay_inbox`. */
  readonly name: string;
  /** Quoted for SQL, e.g. `"billing"."service_pay_inbox"`. */
  readonly sql: string;
  /** Quoted name of its `created_at` index (indexes live in their table's schema). */
  readonly createdAtIndexSql: string;
  /** Quoted name of its `payment_id` index (the inbox is looked up by payment: a shop's order page, support). */
  readonly paymentIdIndexSql: string;
  /** Quoted, schema-qualified name of its claim function (lock and read in one round trip; see inbox-sql.ts). */
  readonly claimFunctionSql: string;
  /** Quoted, schema-qualified name of its take function (lock, write the row and read, in one round trip). */
  readonly takeFunctionSql: string;
}

const RULES = { qualifier: 'schema', maxLength: 63 } as const;

/**
 * Checks and quotes a table name; throws a `TypeError` naming `store` that says what is wrong.
 *
 * @example
 * ```ts
 * tableName('billing.service_pay_inbox', 'PostgresStore').sql; // "billing"."service_pay_inbox"
 * ```
 */
export function tableName(value: unknown = DEFAULT_TABLE_NAME, store = 'PostgresStore'): TableName {
  const parts = tableNameParts(value, store, RULES);
  const table = parts[parts.length - 1] as string;
  return {
    name: parts.join('.'),
    sql: parts.map((part) => `"${part}"`).join('.'),
    // 63 bytes at most, as PostgreSQL would cut it anyway (with a notice).
    createdAtIndexSql: `"${table.slice(0, 63 - '_created_at_idx'.length)}_created_at_idx"`,
    paymentIdIndexSql: `"${table.slice(0, 63 - '_payment_id_idx'.length)}_payment_id_idx"`,
    claimFunctionSql: [...parts.slice(0, -1), `${table.slice(0, 63 - '_claim'.length)}_claim`]
      .map((part) => `"${part}"`)
      .join('.'),
    takeFunctionSql: [...parts.slice(0, -1), `${table.slice(0, 63 - '_take'.length)}_take`]
      .map((part) => `"${part}"`)
      .join('.'),
  };
}
