import type { AutoMigrateOption } from './auto-migrate.js';

/** How a dialect spells and limits table names. */
export interface TableNameRules {
  /** What the qualifier is called in messages: `schema` (PostgreSQL), `database` (MySQL). */
  readonly qualifier: string;
  /** The longest identifier the database keeps (PostgreSQL 63 bytes, MySQL 64 characters). */
  readonly maxLength: number;
  /** Characters the dialect's own derived names add to the last part (`_keys`), which must fit too. */
  readonly reserve?: { readonly suffix: string; readonly why: string } | undefined;
}

/**
 * The options every SQL store takes beside its client: which inbox table, and whether a delivery creates it
 * when missing. Each dialect's stores take their dialect's own (`PostgresTableOptions`, `MySqlTableOptions`,
 * `SqliteTableOptions`), which say what a table name is there.
 *
 * @example
 * ```ts
 * interface KnexStoreOptions extends SqlStoreOptions { knex: Knex }
 * ```
 */
export interface SqlStoreOptions extends AutoMigrateOption {
  /** The inbox table, `name` or `qualifier.name`; default `service_pay_inbox`. */
  tableName?: string | undefined;
}

/** The table name every SQL store defaults to. */
export const DEFAULT_TABLE_NAME = 'service_pay_inbox';

/**
 * Checks a table name, `name` or `qualifier.name`, each part a plain identifier (letters, digits, `_`, `$`;
 * not starting with a digit; within the database's length); answers its parts. The `TypeError` names the
 * store it was given to, so a mistake in `KyselyStore`'s options says `KyselyStore`.
 *
 * @example
 * ```ts
 * tableNameParts('billing.inbox', 'KyselyStore', { qualifier: 'schema', maxLength: 63 }); // ['billing', 'inbox']
 * ```
 */
export function tableNameParts(value: unknown, store: string, rules: TableNameRules): string[] {
  const part = new RegExp(`^[A-Za-z_][A-Za-z0-9_$]{0,${rules.maxLength - 1}}$`);
  const parts = typeof value === 'string' ? value.split('.') : [];
  if (parts.length === 0 || parts.length > 2 || !parts.every((p) => part.test(p))) {
    throw new TypeError(
      `${store}: tableName must be "name" or "${rules.qualifier}.name" of letters, digits, _ and $ (not starting ` +
        `with a digit, at most ${rules.maxLength} characters each), got ${JSON.stringify(value)}.`,
    );
  }
  const last = parts[parts.length - 1] as string;
  const reserve = rules.reserve;
  if (reserve !== undefined && last.length + reserve.suffix.length > rules.maxLength) {
    throw new TypeError(
      `${store}: tableName ${JSON.stringify(value)} is too long: ${reserve.why} ${last}${reserve.suffix}, and names ` +
        `have at most ${rules.maxLength} characters; take at most ${rules.maxLength - reserve.suffix.length}.`,
    );
  }
  return parts;
}

/**
 * What every dialect's table name gives its SQL: the name as given, quoted, and its two indexes' names.
 * Each dialect's `TableName` adds its own (PostgreSQL's functions, MySQL's keys table).
 *
 * @example
 * ```ts
 * const table: InboxTableName = tableName('billing.service_pay_inbox'); // of @service-pay/sql/postgres
 * ```
 */
export interface InboxTableName {
  /** As given, e.g. `billing.service_pay_inbox`. */
  readonly name: string;
  /** Quoted for SQL, e.g. `"billing"."service_pay_inbox"`. */
  readonly sql: string;
  /** Quoted name of its `created_at` index. */
  readonly createdAtIndexSql: string;
  /** Quoted name of its `payment_id` index (the inbox is looked up by payment: a shop's order page, support). */
  readonly paymentIdIndexSql: string;
}

/**
 * A table name checked (`tableNameParts`) and quoted with the dialect's `quote`: the name as given and
 * quoted, its last part (the bare table), and `qualified(name)`, another name in the same schema or
 * database, quoted (an index, a function, a table beside it).
 *
 * @example
 * ```ts
 * const { sql, table, qualified } = quotedTableName('billing.inbox', 'KyselyStore', rules, (part) => `"${part}"`);
 * qualified(`${table}_claim`); // "billing"."inbox_claim"
 * ```
 */
export function quotedTableName(
  value: unknown,
  store: string,
  rules: TableNameRules,
  quote: (part: string) => string,
): { name: string; sql: string; table: string; qualified: (name: string) => string } {
  const parts = tableNameParts(value, store, rules);
  const qualifiers = parts.slice(0, -1);
  const qualified = (name: string) => [...qualifiers, name].map(quote).join('.');
  const table = parts[parts.length - 1] as string;
  return { name: parts.join('.'), sql: qualified(table), table, qualified };
}
