import { WriteOutsideTransactionError } from '@service-pay/core/node';
import { MissingTableError, migrateAdvice } from '../../auto-migrate.js';
import { type Row, type StatementResult, statement } from '../../client.js';
import type { ClaimResult, SqlDialect } from '../../dialect.js';
import { InboxSql } from './inbox-sql.js';
import { sqliteLedgerFlavour } from './ledger.js';
import { type TableName, tableName } from './table-name.js';

/**
 * SQLite: the key is the database's write lock, taken by the claim (a write) and held to the end of the
 * transaction, so one delivery writes at a time per database file, across processes; another answers
 * in-progress (SQLITE_BUSY). Statements run in the app's process and cannot be interrupted from another
 * connection; a rollback never has to.
 *
 * @example
 * ```ts
 * const table = sqliteDialect.table('main.service_pay_inbox', 'KyselyStore'); // "main"."service_pay_inbox"
 * ```
 */
export const sqliteDialect: SqlDialect<TableName> = {
  name: 'SQLite',
  ledger: sqliteLedgerFlavour,
  table: (value, store) => tableName(value, store),
  migrate: (table) => {
    const inbox = new InboxSql(table);
    return { statements: [inbox.createTable, ...inbox.createIndexes].map(statement), inTransaction: true };
  },
  claim: (table, key) => new InboxSql(table).claim(key),
  readClaim(rows: readonly Row[]): ClaimResult {
    const found = rows[0]?.fingerprint;
    if (found !== null && found !== undefined) return { state: 'completed', fingerprint: String(found) };
    return { state: 'free', session: undefined, written: false };
  },
  isLockBusy: isSqliteBusy,
  abortsTransaction: (error) => sqliteCodes(error).some((code) => ROLLS_BACK.test(code)),
  record: (table, key, fingerprint, record) => new InboxSql(table).record(key, fingerprint, record),
  recordApart: (table, key, fingerprint, record) => new InboxSql(table).recordApart(key, fingerprint, record),
  pruneBatch: (table, batch, olderThanMs) => new InboxSql(table).pruneBatch(batch, olderThanMs),
  deleted: (result: StatementResult) => result.affected,
  interrupt: () => undefined,
  explainError: (error, table, store, autoMigrate) => explainSqliteError(error, table.name, store, autoMigrate),
  explainHandlerError: (error, store) => (isSqliteBusy(error) ? secondConnectionError(store, error) : undefined),
  endsTransaction: endsSqliteTransaction,
};

/** SQLITE_BUSY (and SQLITE_BUSY_*, SQLITE_LOCKED): another connection holds the write lock. */
export function isSqliteBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'));
}

/**
 * The errors after which SQLite may have rolled the whole transaction back by itself (a full disk, an I/O
 * error, no memory, an interrupt) or asks the caller to (busy inside a transaction): taken as ended either
 * way, since a statement sent after a rollback would commit on its own.
 */
const ROLLS_BACK = /^SQLITE_(?:FULL|IOERR|NOMEM|INTERRUPT|BUSY)/;

/** The SQLite codes in an error and its causes (Drizzle wraps the driver's error in its own). */
function sqliteCodes(error: unknown): string[] {
  const codes: string[] = [];
  let value = error as { code?: unknown; cause?: unknown } | null | undefined;
  for (let depth = 0; value !== null && typeof value === 'object' && depth < 4; depth++) {
    if (typeof value.code === 'string') codes.push(value.code);
    value = value.cause as typeof value;
  }
  return codes;
}

/**
 * `SQLITE_BUSY` in a handler: the delivery's transaction holds the database's write lock, so a write sent
 * through another connection to the same file waits for it (that connection's busy timeout) and fails; it
 * could only ever commit apart from the delivery. Said as the write guard says it, naming `ctx.tx`.
 */
function secondConnectionError(store: string, cause: unknown): Error {
  const error = new WriteOutsideTransactionError(
    store,
    'a second connection to the database file, which waited for the write lock this delivery holds and ' +
      'failed with SQLITE_BUSY, "database is locked"',
  );
  (error as { cause?: unknown }).cause = cause;
  return error;
}

/** A missing inbox table is a setup mistake: say the fix instead of "no such table". */
export function explainSqliteError(error: unknown, tableName: string, store: string, autoMigrate = false): unknown {
  const message = (error as { message?: unknown } | null)?.message;
  if (typeof message === 'string' && message.includes('no such table')) {
    return new MissingTableError(
      `${store}: the inbox table ${tableName} does not exist; ${migrateAdvice(autoMigrate)}.`,
      { cause: error },
    );
  }
  return error;
}

/**
 * Statements that would end or restart the delivery's transaction from inside the handler: BEGIN, COMMIT,
 * END, ROLLBACK (savepoints, `ROLLBACK TO` included, are fine). COMMIT would commit the credit without the
 * inbox row.
 */
export function endsSqliteTransaction(text: unknown): boolean {
  if (typeof text !== 'string') return false;
  const match = /^\s*([A-Za-z]+)(?:\s+([A-Za-z]+))?/.exec(text);
  if (match === null) return false;
  const first = (match[1] as string).toLowerCase();
  if (first === 'begin' || first === 'commit' || first === 'end') return true;
  return first === 'rollback' && match[2]?.toLowerCase() !== 'to';
}
