/** How a dialect spells and limits table names. */
export interface TableNameRules {
  /** What the qualifier is called in messages: `schema` (PostgreSQL), `database` (MySQL). */
  readonly qualifier: string;
  /** The longest identifier the database keeps (PostgreSQL 63 bytes, MySQL 64 characters). */
  readonly maxLength: number;
  /** Characters the dialect's own derived names add to the last part (`_keys`), which must fit too. */
  readonly reserve?: { readonly suffix: string; readonly why: string } | undefined;
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
