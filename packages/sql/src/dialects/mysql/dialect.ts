import { MissingTableError, migrateAdvice } from '../../auto-migrate.js';
import type { Row, StatementResult } from '../../client.js';
import { statement } from '../../client.js';
import type { ClaimResult, Interruption, SqlDialect } from '../../dialect.js';
import { InboxSql } from './inbox-sql.js';
import { type TableName, tableName } from './table-name.js';

/**
 * MySQL 8 and MariaDB 10.6+: the key is a row lock on one of a fixed set of lock slots (`<table>_keys`,
 * made by `migrate()`), taken with `FOR UPDATE NOWAIT` in the delivery's transaction, so it ends with the
 * transaction whatever ends it and nothing session-scoped ever goes back to a pool. The claim reads the
 * key's inbox row and the connection's id with the lock, in one statement. A running statement is
 * stopped with `KILL QUERY`, a session with `KILL`.
 *
 * @example
 * ```ts
 * const table = mysqlDialect.table('shop.inbox', 'KyselyStore'); // `shop`.`inbox`, slots in `shop`.`inbox_keys`
 * ```
 */
export const mysqlDialect: SqlDialect<TableName> = {
  name: 'MySQL',
  table: (value, store) => tableName(value, store),
  migrate: (table) => {
    const inbox = new InboxSql(table);
    return { statements: [...inbox.migrateStatements(), ...inbox.migrateSlots()].map(statement), inTransaction: false };
  },
  claim: (table, key) => new InboxSql(table).claim(key),
  readClaim(rows: readonly Row[], table, store): ClaimResult {
    const row = rows[0];
    if (row === undefined) {
      throw new MissingTableError(
        `${store}: the lock slots of ${table.name}_keys are missing; run await store.migrate() once at start-up.`,
      );
    }
    const found = row.fingerprint;
    if (found !== null && found !== undefined) return { state: 'completed', fingerprint: String(found) };
    return { state: 'free', session: Number(row.id), written: false };
  },
  isLockBusy: isMySqlLockBusy,
  record: (table, key, fingerprint, record) => new InboxSql(table).record(key, fingerprint, record),
  recordApart: (table, key, fingerprint, record) => new InboxSql(table).recordApart(key, fingerprint, record),
  pruneBatch: (table, batch, olderThanMs) => new InboxSql(table).pruneBatch(batch, olderThanMs),
  deleted: (result: StatementResult) => result.affected,
  interrupt(session: unknown, how: Interruption) {
    if (typeof session !== 'number' || !Number.isSafeInteger(session)) return undefined;
    return { sql: how === 'statement' ? 'KILL QUERY ?' : 'KILL ?', values: [session] };
  },
  explainError: (error, table, store, autoMigrate) => explainMySqlError(error, table.name, store, autoMigrate),
  endsTransaction: endsMySqlTransaction,
};

/**
 * `FOR UPDATE NOWAIT` on a row another transaction holds: MySQL 8 answers ER_LOCK_NOWAIT (3572), MariaDB
 * ER_LOCK_WAIT_TIMEOUT (1205) at once.
 *
 * @example
 * ```ts
 * if (isMySqlLockBusy(error)) return { state: 'in-progress', retryAfterMs: 1_000 };
 * ```
 */
export function isMySqlLockBusy(error: unknown): boolean {
  return serverCodes(error).some((code) => code === 3572 || code === 1205);
}

/**
 * A missing table is a setup mistake: say the fix, naming the store that met it, instead of "Table
 * doesn't exist".
 *
 * @example
 * ```ts
 * throw explainMySqlError(error, 'service_pay_inbox', 'MySqlStore');
 * ```
 */
export function explainMySqlError(error: unknown, table: string, store: string, autoMigrate = false): unknown {
  if (error instanceof MissingTableError) return error;
  const prismaMissingTable = (error as { code?: unknown } | null)?.code === 'P2021';
  if (prismaMissingTable || serverCodes(error).includes(1146)) {
    return new MissingTableError(
      `${store}: the inbox table ${table} (or its ${table}_keys) does not exist; ${migrateAdvice(autoMigrate)}.`,
      { cause: error },
    );
  }
  return error;
}

/**
 * The server's error numbers in an error as each client wraps it: mysql2's `errno` on the error, Drizzle's
 * on its `cause`, Prisma's in `meta.driverAdapterError.cause.code` (in a transaction) or only in its message
 * ("Raw query failed. Code: `1146`", outside one).
 */
function serverCodes(error: unknown): number[] {
  const codes: number[] = [];
  const seen = new Set<unknown>();
  const visit = (value: unknown, depth: number) => {
    if (value === null || typeof value !== 'object' || seen.has(value) || depth > 4) return;
    seen.add(value);
    const e = value as { errno?: unknown; code?: unknown; cause?: unknown; meta?: { driverAdapterError?: unknown } };
    for (const candidate of [e.errno, e.code]) if (typeof candidate === 'number') codes.push(candidate);
    const inMessage = /Code: `(\d+)`/.exec(String((value as { message?: unknown }).message ?? ''));
    if (inMessage !== null) codes.push(Number(inMessage[1]));
    visit(e.cause, depth + 1);
    visit(e.meta?.driverAdapterError, depth + 1);
  };
  visit(error, 0);
  return codes;
}

/**
 * Statements that would end or restart the delivery's transaction from inside the handler: BEGIN, START
 * TRANSACTION, COMMIT, ROLLBACK (not ROLLBACK TO SAVEPOINT), SET autocommit, XA, and the DDL that MySQL
 * commits implicitly before running (CREATE/ALTER/DROP/RENAME/TRUNCATE, LOCK TABLES).
 *
 * @example
 * ```ts
 * endsMySqlTransaction('CREATE TABLE t (id int)'); // true: MySQL commits before DDL
 * ```
 */
export function endsMySqlTransaction(text: unknown): boolean {
  if (typeof text !== 'string') return false;
  const match = /^\s*([A-Za-z]+)(?:\s+([A-Za-z]+))?(?:\s+([A-Za-z]+))?/.exec(text);
  if (match === null) return false;
  const first = (match[1] as string).toLowerCase();
  const second = match[2]?.toLowerCase();
  if (['begin', 'commit', 'xa', 'create', 'alter', 'drop', 'rename', 'truncate'].includes(first)) return true;
  if (first === 'rollback') return second !== 'to' && !(second === 'work' && match[3]?.toLowerCase() === 'to');
  if (first === 'start') return second === 'transaction';
  if (first === 'lock') return second === 'tables' || second === 'table';
  if (first === 'set') return second === 'autocommit';
  return false;
}
