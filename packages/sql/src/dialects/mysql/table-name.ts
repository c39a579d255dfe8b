import { DEFAULT_TABLE_NAME, tableNameParts } from '../../table-name.js';

/** What the lock slots' table adds to the name, which must stay within 64 characters too. */
const KEYS_SUFFIX = '_keys';

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

const RULES = {
  qualifier: 'database',
  maxLength: 64,
  reserve: { suffix: KEYS_SUFFIX, why: 'the store keeps its lock slots in a table beside it,' },
} as const;

/**
 * Checks and quotes a table name; throws a `TypeError` naming `store` that says what is wrong (the lock
 * slots' table `<name>_keys` must fit MySQL's 64 characters too).
 *
 * @example
 * ```ts
 * tableName('shop.service_pay_inbox', 'MySqlStore').sql; // `shop`.`service_pay_inbox`
 * ```
 */
export function tableName(value: unknown = DEFAULT_TABLE_NAME, store = 'MySqlStore'): TableName {
  const parts = tableNameParts(value, store, RULES);
  const last = parts[parts.length - 1] as string;
  const quote = (names: string[]) => names.map((part) => `\`${part}\``).join('.');
  return {
    name: parts.join('.'),
    sql: quote(parts),
    keysSql: quote([...parts.slice(0, -1), `${last}${KEYS_SUFFIX}`]),
    createdAtIndexSql: '`service_pay_created_at_idx`',
    paymentIdIndexSql: '`service_pay_payment_id_idx`',
  };
}
