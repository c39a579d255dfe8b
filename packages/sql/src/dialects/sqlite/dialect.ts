import { MissingTableError, migrateAdvice } from '../../auto-migrate.js';

/** SQLITE_BUSY (and SQLITE_BUSY_*, SQLITE_LOCKED): another connection holds the write lock. */
export function isSqliteBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'));
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
