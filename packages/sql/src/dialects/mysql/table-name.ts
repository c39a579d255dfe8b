import { DEFAULT_TABLE_NAME, type InboxTableName, quotedTableName, type SqlStoreOptions } from '../../table-name.js';

/** What the lock slots' table adds to the name, which must stay within 64 characters too. */
const KEYS_SUFFIX = '_keys';

/**
 * The inbox table's name, checked once and quoted for SQL: `name` or `database.name`, each part a plain
 * identifier (letters, digits, `_`, `$`; not starting with a digit; at most 64 characters, MySQL's limit).
 * Parts are backtick-quoted, so the name is used exactly as given.
 */
export interface TableName extends InboxTableName {
  /** The ORM stores' keys table beside it (`<name>_keys`), quoted. */
  readonly keysSql: string;
  /**
   * What the store learned of the server behind its table (the dialect's `probe`, asked at the first
   * claim): whether it takes `INSERT ... RETURNING` (MariaDB), which lets the claim take the key by writing
   * the inbox row, and whether a lock wait timeout rolls the whole transaction back
   * (`innodb_rollback_on_timeout`, a setting of the server's start). Unknown until then.
   */
  readonly server: { insertReturning: boolean | undefined; rollbackOnTimeout: boolean };
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
  const { name, sql, table, qualified } = quotedTableName(value, store, RULES, (part) => `\`${part}\``);
  return {
    name,
    sql,
    keysSql: qualified(`${table}${KEYS_SUFFIX}`),
    server: { insertReturning: undefined, rollbackOnTimeout: false },
    // Index names are per table in MySQL: the same two on every inbox.
    createdAtIndexSql: '`service_pay_created_at_idx`',
    paymentIdIndexSql: '`service_pay_payment_id_idx`',
  };
}

/**
 * The options of the ORM stores on MySQL and MariaDB beside their client: the inbox table (`database.name`, with
 * room for its `_keys` table) and `autoMigrate`.
 *
 * @example
 * ```ts
 * const options: MySqlTableOptions = { tableName: 'shop.service_pay_inbox', autoMigrate: false };
 * ```
 */
export interface MySqlTableOptions extends SqlStoreOptions {
  /** `name` or `database.name`, at most 59 characters; default `service_pay_inbox` (and `<name>_keys`). */
  tableName?: string | undefined;
}
