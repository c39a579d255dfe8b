/**
 * The inbox table's name, checked once and quoted for SQL: `name` or `database.name`, each part a plain
 * identifier (letters, digits, `_`, `$`; not starting with a digit; at most 64 characters, MySQL's limit).
 * Parts are backtick-quoted, so the name is used exactly as given.
 */
export interface TableName {
  /** As given, e.g. `service_pay_inbox`. */
  readonly name: string;
  /** Quoted for SQL, e.g. `` `service_pay_inbox` ``. */
  readonly sql: string;
  /** The ORM stores' keys table beside it (`<name>_keys`), quoted. */
  readonly keysSql: string;
  /** Quoted names of its indexes (index names are per table in MySQL). */
  readonly createdAtIndexSql: string;
  readonly paymentIdIndexSql: string;
}

const PART = /^[A-Za-z_][A-Za-z0-9_$]{0,63}$/;
/** What the keys table adds to the name, which must stay within 64 characters too. */
const KEYS_SUFFIX = '_keys';

export const DEFAULT_TABLE_NAME = 'service_pay_inbox';

/**
 * Checks and quotes a table name; throws a `TypeError` that says what is wrong. `withKeysTable`: the ORM
 * stores' keys table must fit MySQL's 64 characters too.
 *
 * @example
 * ```ts
 * tableName('shop.service_pay_inbox').sql; // `shop`.`service_pay_inbox`
 * ```
 */
export function tableName(value: unknown = DEFAULT_TABLE_NAME, options: { withKeysTable?: boolean } = {}): TableName {
  const parts = typeof value === 'string' ? value.split('.') : [];
  if (parts.length === 0 || parts.length > 2 || !parts.every((part) => PART.test(part))) {
    throw new TypeError(
      `MySqlStore: tableName must be "name" or "database.name" of letters, digits, _ and $ (not starting with a ` +
        `digit, at most 64 characters each), got ${JSON.stringify(value)}.`,
    );
  }
  const last = parts[parts.length - 1] as string;
  if (options.withKeysTable === true && last.length + KEYS_SUFFIX.length > 64) {
    throw new TypeError(
      `MySqlStore: tableName ${JSON.stringify(value)} is too long: the ORM stores keep a ${last}${KEYS_SUFFIX} ` +
        `table beside it, and MySQL names have at most 64 characters; take at most ${64 - KEYS_SUFFIX.length}.`,
    );
  }
  const quote = (names: string[]) => names.map((part) => `\`${part}\``).join('.');
  return {
    name: value as string,
    sql: quote(parts),
    keysSql: quote([...parts.slice(0, -1), `${last}${KEYS_SUFFIX}`]),
    createdAtIndexSql: '`service_pay_created_at_idx`',
    paymentIdIndexSql: '`service_pay_payment_id_idx`',
  };
}
