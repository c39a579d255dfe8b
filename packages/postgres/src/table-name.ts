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
}

const PART = /^[A-Za-z_][A-Za-z0-9_$]{0,62}$/;

export const DEFAULT_TABLE_NAME = 'service_pay_inbox';

/**
 * Checks and quotes a table name; throws a `TypeError` that says what is wrong.
 *
 * @example
 * ```ts
 * tableName('billing.service_pay_inbox').sql; // "billing"."service_pay_inbox"
 * ```
 */
export function tableName(value: unknown = DEFAULT_TABLE_NAME): TableName {
  const parts = typeof value === 'string' ? value.split('.') : [];
  if (parts.length === 0 || parts.length > 2 || !parts.every((part) => PART.test(part))) {
    throw new TypeError(
      `PostgresStore: tableName must be "name" or "schema.name" of letters, digits, _ and $ (not starting with a digit, ` +
        `at most 63 characters each), got ${JSON.stringify(value)}.`,
    );
  }
  const table = parts[parts.length - 1] as string;
  return {
    name: value as string,
    sql: parts.map((part) => `"${part}"`).join('.'),
    // 63 bytes at most, as PostgreSQL would cut it anyway (with a notice).
    createdAtIndexSql: `"${table.slice(0, 63 - '_created_at_idx'.length)}_created_at_idx"`,
    paymentIdIndexSql: `"${table.slice(0, 63 - '_payment_id_idx'.length)}_payment_id_idx"`,
    claimFunctionSql: [...parts.slice(0, -1), `${table.slice(0, 63 - '_claim'.length)}_claim`]
      .map((part) => `"${part}"`)
      .join('.'),
  };
}
