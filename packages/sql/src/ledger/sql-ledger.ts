import {
  type AttemptSource,
  decodeLedgerCursor,
  encodeLedgerCursor,
  type LedgerCounts,
  type LedgerEntry,
  type LedgerFailure,
  type LedgerFlagReason,
  type LedgerPage,
  type LedgerPayment,
  ledgerFlagError,
  type PaymentLedger,
  pageLimit,
} from '@service-pay/core';
import { type AutoMigration, MissingTableError } from '../auto-migrate.js';
import type { Row, SqlClient, Statement, StatementResult } from '../client.js';
import type { LedgerStatements } from './ledger-statements.js';

/**
 * A SQL store's ledger: one table beside the inbox, written outside any delivery (autocommit, on a
 * connection of the store's client, after the delivery's transaction rolled back), read by the CLI and the
 * operator page. A write that meets a missing table makes it (with `autoMigrate`) and tries once more.
 *
 * @example
 * ```ts
 * const ledger = new SqlLedger(client, new LedgerStatements(table, postgresLedgerFlavour), auto, explain);
 * ```
 */
export class SqlLedger implements PaymentLedger {
  constructor(
    private readonly client: SqlClient<unknown>,
    private readonly sql: LedgerStatements,
    private readonly auto: AutoMigration,
    /** The dialect's reading of an error: a missing table becomes a `MissingTableError`. */
    private readonly explain: (error: unknown) => unknown,
  ) {}

  async recordFailure(failure: LedgerFailure): Promise<number> {
    const result = await this.#run(this.sql.recordFailure(failure));
    const attempts = Number(result.rows[0]?.attempts);
    if (Number.isFinite(attempts) && attempts > 0) return attempts;
    // MySQL 8 answers no row: an insert counts one affected row, an update of the row two.
    return result.affected === 1 ? 1 : 0;
  }

  async close(paymentId: string, closedBy: AttemptSource, at = Date.now()): Promise<boolean> {
    return (await this.#run(this.sql.close(paymentId, closedBy, at))).affected > 0;
  }

  async flag(
    paymentId: string,
    reason: LedgerFlagReason,
    details: Partial<LedgerPayment> & { message?: string; at?: number } = {},
  ): Promise<void> {
    const { code, message } = ledgerFlagError(reason, details.message);
    await this.#run(this.sql.flag(paymentId, reason, details, code, message, details.at ?? Date.now()));
  }

  async failing(options: { limit?: number; cursor?: string } = {}): Promise<LedgerPage> {
    const limit = pageLimit(options.limit);
    const cursor = options.cursor === undefined ? undefined : decodeLedgerCursor(options.cursor);
    const rows = (await this.#read(this.sql.failing(limit, cursor))).rows;
    const entries = rows.slice(0, limit).map((row) => entryOf(row));
    const last = entries[entries.length - 1];
    return rows.length > limit && last !== undefined ? { entries, next: encodeLedgerCursor(last) } : { entries };
  }

  async story(paymentId: string): Promise<LedgerEntry | undefined> {
    const row = (await this.#read(this.sql.story(paymentId))).rows[0];
    return row === undefined ? undefined : entryOf(row);
  }

  async counts(): Promise<LedgerCounts> {
    const counts: LedgerCounts = { failing: 0, flagged: 0, closed: 0 };
    for (const row of (await this.#read(this.sql.counts())).rows) {
      const state = String(row.state);
      if (state === 'failing' || state === 'flagged' || state === 'closed') counts[state] += Number(row.n);
    }
    return counts;
  }

  /** A reader's statement: a ledger not made yet has no entries (a reader never creates tables). */
  async #read(statement: Statement): Promise<StatementResult> {
    try {
      return await this.client.queryOutside(statement);
    } catch (error) {
      const explained = this.explain(error);
      if (explained instanceof MissingTableError) return { rows: [], affected: 0 };
      throw explained;
    }
  }

  /** One statement outside any delivery; a missing table is made (autoMigrate) and the statement sent again. */
  async #run(statement: Statement): Promise<StatementResult> {
    try {
      return await this.client.queryOutside(statement);
    } catch (error) {
      return await this.auto.recover(this.explain(error), () => this.client.queryOutside(statement));
    }
  }
}

/** A ledger row as an entry; `handled_by` (an inbox row's source) closes a failing one. */
function entryOf(row: Row): LedgerEntry {
  const entry: LedgerEntry = {
    paymentId: String(row.payment_id),
    orderNo: String(row.order_no),
    amount: String(row.amount),
    tokenSymbol: String(row.token_symbol),
    key: String(row.dedupe_key),
    state: String(row.state) as LedgerEntry['state'],
    attempts: Number(row.attempts),
    firstFailedAt: Number(row.first_failed_at),
    lastFailedAt: Number(row.last_failed_at),
    lastError: { code: String(row.last_error_code), message: String(row.last_error_message) },
  };
  if (row.flag !== null && row.flag !== undefined) entry.flag = String(row.flag) as LedgerFlagReason;
  if (row.closed_by !== null && row.closed_by !== undefined) entry.closedBy = String(row.closed_by) as AttemptSource;
  if (row.closed_at !== null && row.closed_at !== undefined) entry.closedAt = Number(row.closed_at);
  const handledBy = row.handled_by;
  if (entry.state === 'failing' && handledBy !== null && handledBy !== undefined) {
    entry.state = 'closed';
    entry.closedBy = String(handledBy) as AttemptSource;
  }
  return entry;
}
