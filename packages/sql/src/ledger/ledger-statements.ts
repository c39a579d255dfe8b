import type { AttemptSource, LedgerCursor, LedgerFailure, LedgerFlagReason, LedgerPayment } from '@service-pay/core';
import type { Statement } from '../client.js';
import type { InboxTableName } from '../table-name.js';
import type { LedgerFlavour } from './ledger-flavour.js';

/** The columns every reader selects, in the names `entryOf` reads. */
const COLUMNS =
  'l.payment_id, l.dedupe_key, l.order_no, l.amount, l.token_symbol, l.state, l.flag, l.attempts, ' +
  'l.first_failed_at, l.last_failed_at, l.last_error_code, l.last_error_message, l.closed_by, l.closed_at';

/**
 * The ledger's statements for one inbox table, in any dialect's flavour. The ledger table sits beside the
 * inbox (`<inbox>_ledger`), one row per payment; `is_open` (1 while failing or flagged) leads its index, so
 * a page of open entries, most recent failure first, is one index range however many entries are closed.
 * An entry still `failing` whose payment has an inbox row was credited since by an attempt that did not know
 * of the entry (another process): readers show it closed, read through the inbox's primary key.
 *
 * @example
 * ```ts
 * const sql = new LedgerStatements(table, postgresLedgerFlavour);
 * await client.queryOutside(sql.recordFailure(failure));
 * ```
 */
export class LedgerStatements {
  readonly #names: { ledger: string; index: string; indexOn: string };

  constructor(
    readonly table: InboxTableName,
    readonly flavour: LedgerFlavour,
  ) {
    this.#names = flavour.names(table);
  }

  /** The ledger table and its index, if missing; run after the inbox's own migration. */
  migrate(): Statement[] {
    const { key, text, bigint, engine } = this.flavour.types;
    const { ledger, index, indexOn } = this.#names;
    // MySQL 8 has no CREATE INDEX IF NOT EXISTS: there the index is made with the table.
    const inline = this.flavour.upsert === 'on-duplicate-key';
    return [
      {
        sql: `CREATE TABLE IF NOT EXISTS ${ledger} (
  payment_id ${key} NOT NULL PRIMARY KEY,
  dedupe_key ${key} NOT NULL,
  order_no ${text} NOT NULL,
  amount ${text} NOT NULL,
  token_symbol ${text} NOT NULL,
  state VARCHAR(8) NOT NULL CHECK (state IN ('failing', 'flagged', 'closed')),
  is_open SMALLINT NOT NULL,
  flag VARCHAR(32),
  attempts INTEGER NOT NULL,
  first_failed_at ${bigint} NOT NULL,
  last_failed_at ${bigint} NOT NULL,
  last_error_code VARCHAR(64) NOT NULL,
  last_error_message ${text} NOT NULL,
  closed_by VARCHAR(16),
  closed_at ${bigint}${inline ? `,\n  INDEX ${index} (is_open, last_failed_at, payment_id)` : ''}
)${engine}`,
        values: [],
      },
      ...(inline
        ? []
        : [
            {
              sql: `CREATE INDEX IF NOT EXISTS ${index} ON ${indexOn} (is_open, last_failed_at, payment_id)`,
              values: [],
            },
          ]),
    ];
  }

  /** One failed attempt: the entry made, or its attempts counted one more (answering them where it can). */
  recordFailure(f: LedgerFailure): Statement {
    const values: unknown[] = [];
    const v = (x: string | number | null) => this.flavour.value(x, values);
    const insert =
      `INSERT INTO ${this.#names.ledger}${this.flavour.upsert === 'on-conflict' ? ' AS l' : ''} ` +
      '(payment_id, dedupe_key, order_no, amount, token_symbol, state, is_open, attempts, first_failed_at, ' +
      'last_failed_at, last_error_code, last_error_message) VALUES (' +
      [
        v(f.paymentId),
        v(f.key),
        v(f.orderNo),
        v(f.amount),
        v(f.tokenSymbol),
        "'failing'",
        '1',
        '1',
        v(f.at),
        v(f.at),
        v(f.code),
        v(f.message),
      ].join(', ') +
      ')';
    // A flagged entry stays flagged (it needs a look either way); a closed one opens again (its inbox row was pruned).
    const sql =
      this.flavour.upsert === 'on-conflict'
        ? `${insert} ON CONFLICT (payment_id) DO UPDATE SET attempts = l.attempts + 1, ` +
          'first_failed_at = CASE WHEN l.first_failed_at = 0 THEN excluded.first_failed_at ELSE l.first_failed_at END, ' +
          'last_failed_at = excluded.last_failed_at, last_error_code = excluded.last_error_code, ' +
          'last_error_message = excluded.last_error_message, dedupe_key = excluded.dedupe_key, ' +
          "state = CASE WHEN l.state = 'flagged' THEN 'flagged' ELSE 'failing' END, is_open = 1, closed_by = NULL, closed_at = NULL " +
          'RETURNING attempts'
        : `${insert} ON DUPLICATE KEY UPDATE attempts = attempts + 1, ` +
          'first_failed_at = IF(first_failed_at = 0, VALUES(first_failed_at), first_failed_at), ' +
          'last_failed_at = VALUES(last_failed_at), last_error_code = VALUES(last_error_code), ' +
          'last_error_message = VALUES(last_error_message), dedupe_key = VALUES(dedupe_key), ' +
          "state = IF(state = 'flagged', 'flagged', 'failing'), is_open = 1, closed_by = NULL, closed_at = NULL" +
          (this.flavour.returning(this.table) ? ' RETURNING attempts' : '');
    return { sql, values };
  }

  /** Closes the payment's entry if it is failing. */
  close(paymentId: string, closedBy: AttemptSource, at: number): Statement {
    const values: unknown[] = [];
    const v = (x: string | number | null) => this.flavour.value(x, values);
    return {
      sql: `UPDATE ${this.#names.ledger} SET state = 'closed', is_open = 0, closed_by = ${v(closedBy)}, closed_at = ${v(at)} WHERE payment_id = ${v(paymentId)} AND state = 'failing'`,
      values,
      write: true,
    };
  }

  /** Flags the payment, making its entry if it has none. */
  flag(
    paymentId: string,
    reason: LedgerFlagReason,
    d: Partial<LedgerPayment>,
    code: string,
    message: string,
    at: number,
  ): Statement {
    const values: unknown[] = [];
    const v = (x: string | number | null) => this.flavour.value(x, values);
    const insert =
      `INSERT INTO ${this.#names.ledger}${this.flavour.upsert === 'on-conflict' ? ' AS l' : ''} ` +
      '(payment_id, dedupe_key, order_no, amount, token_symbol, state, is_open, flag, attempts, first_failed_at, ' +
      'last_failed_at, last_error_code, last_error_message) VALUES (' +
      [
        v(paymentId),
        v(d.key ?? ''),
        v(d.orderNo ?? ''),
        v(d.amount ?? ''),
        v(d.tokenSymbol ?? ''),
        "'flagged'",
        '1',
        v(reason),
        '0',
        '0',
        v(at),
        v(code),
        v(message),
      ].join(', ') +
      ')';
    const sql =
      this.flavour.upsert === 'on-conflict'
        ? `${insert} ON CONFLICT (payment_id) DO UPDATE SET state = 'flagged', is_open = 1, flag = excluded.flag, ` +
          'last_failed_at = excluded.last_failed_at, last_error_code = excluded.last_error_code, last_error_message = excluded.last_error_message'
        : `${insert} ON DUPLICATE KEY UPDATE state = 'flagged', is_open = 1, flag = VALUES(flag), ` +
          'last_failed_at = VALUES(last_failed_at), last_error_code = VALUES(last_error_code), last_error_message = VALUES(last_error_message)';
    return { sql, values, write: true };
  }

  /**
   * A page of open entries after `cursor`, most recent failure first, one more than `limit` (to know of a
   * next page). An entry whose payment was credited since is skipped (`handled`), read by the inbox's key.
   */
  failing(limit: number, cursor: LedgerCursor | undefined): Statement {
    const values: unknown[] = [];
    const v = (x: string | number | null) => this.flavour.value(x, values);
    // The first condition alone is a range of the index; the second orders ties by payment id.
    const after =
      cursor === undefined
        ? ''
        : ` AND l.last_failed_at <= ${v(cursor.lastFailedAt)} AND (l.last_failed_at < ${v(cursor.lastFailedAt)} OR l.payment_id < ${v(cursor.paymentId)})`;
    return {
      sql:
        `SELECT ${COLUMNS} FROM ${this.#names.ledger} l WHERE l.is_open = 1${after} ` +
        `AND (l.state = 'flagged' OR NOT EXISTS (SELECT 1 FROM ${this.table.sql} i WHERE i.${this.#key()} = l.dedupe_key)) ` +
        `ORDER BY l.is_open DESC, l.last_failed_at DESC, l.payment_id DESC LIMIT ${Number(limit) + 1}`,
      values,
    };
  }

  /** One payment's entry, with whether its payment has an inbox row and what recorded it. */
  story(paymentId: string): Statement {
    const values: unknown[] = [];
    const v = (x: string | number | null) => this.flavour.value(x, values);
    return {
      sql:
        `SELECT ${COLUMNS}, (SELECT i.source FROM ${this.table.sql} i WHERE i.${this.#key()} = l.dedupe_key) AS handled_by ` +
        `FROM ${this.#names.ledger} l WHERE l.payment_id = ${v(paymentId)}`,
      values,
    };
  }

  /**
   * How many entries are in each state, as recorded. A failing entry whose payment another process credited
   * without knowing of it is counted failing here (the list and the story show it closed): checking each
   * against the inbox cost a second over 100,000 entries on PostgreSQL 15, the plain count 60 ms.
   */
  counts(): Statement {
    return { sql: `SELECT l.state AS state, COUNT(*) AS n FROM ${this.#names.ledger} l GROUP BY l.state`, values: [] };
  }

  /** The inbox's key column, quoted where the dialect must (`key` is a keyword of MySQL). */
  #key(): string {
    return this.flavour.upsert === 'on-duplicate-key' ? '`key`' : 'key';
  }
}
