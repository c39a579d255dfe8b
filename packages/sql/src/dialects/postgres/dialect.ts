import { MissingTableError, migrateAdvice } from '../../auto-migrate.js';
import type { Row, StatementResult } from '../../client.js';
import { statement } from '../../client.js';
import type { ClaimResult, Interruption, SqlDialect } from '../../dialect.js';
import { InboxSql } from './inbox-sql.js';
import { type TableName, tableName } from './table-name.js';

/** How long ending a backend waits for it to be gone (its locks freed). */
const TERMINATE_WAIT_MS = 5_000;

/** The backend a claim ran on and its transaction's start: together they name that transaction. */
interface PostgresSession {
  readonly pid: number;
  readonly xactUs: string;
}

/**
 * PostgreSQL: the key is a transaction-level advisory lock taken without waiting by the inbox table's
 * claim function (lock, then read the key's row, in one round trip), and a running statement is
 * interrupted by `pg_cancel_backend`, a session ended by `pg_terminate_backend`, both only while that
 * backend is still in the claiming transaction.
 *
 * @example
 * ```ts
 * const table = postgresDialect.table(undefined, 'KyselyStore'); // "service_pay_inbox"
 * ```
 */
export const postgresDialect: SqlDialect<TableName> = {
  name: 'PostgreSQL',
  table: (value, store) => tableName(value, store),
  migrate: (table) => ({ statements: new InboxSql(table).migrateStatements().map(statement), inTransaction: true }),
  claim: (table, key, row) =>
    statement(
      row === undefined ? new InboxSql(table).claim(key) : new InboxSql(table).take(key, row.fingerprint, row.draft),
    ),
  readClaim(rows: readonly Row[]): ClaimResult {
    const row = rows[0];
    const written = row?.inserted === true;
    const found = row?.fingerprint;
    if (!written && found !== null && found !== undefined) return { state: 'completed', fingerprint: String(found) };
    // The writing claim that took the lock always wrote or found a row; neither is never this delivery's.
    if (row?.locked !== true || row.inserted === false) return { state: 'held' };
    const session: PostgresSession = { pid: Number(row.pid), xactUs: String(row.xact_us ?? '') };
    return { state: 'free', session, written };
  },
  // The advisory lock answers `false` rather than failing.
  isLockBusy: () => false,
  record: (table, key, fingerprint, record) => statement(new InboxSql(table).insert(key, fingerprint, record)),
  recordApart: (table, key, fingerprint, record) =>
    statement(new InboxSql(table).recordApart(key, fingerprint, record)),
  pruneBatch: (table, batch, olderThanMs) => statement(new InboxSql(table).pruneBatchCounted(batch, olderThanMs)),
  deleted: (result: StatementResult) => Number(result.rows[0]?.deleted ?? 0),
  interrupt(session: unknown, how: Interruption) {
    const { pid, xactUs } = (session ?? {}) as Partial<PostgresSession>;
    if (!Number.isSafeInteger(pid) || !/^\d+$/.test(xactUs ?? '')) return undefined;
    const call =
      how === 'statement' ? `pg_cancel_backend(${pid})` : `pg_terminate_backend(${pid}, ${TERMINATE_WAIT_MS})`;
    return statement(
      `SELECT ${call} FROM pg_stat_activity WHERE pid = ${pid} AND (extract(epoch FROM xact_start) * 1000000)::bigint = ${xactUs}`,
    );
  },
  explainError: (error, table, store, autoMigrate) => explainPostgresError(error, table.name, store, autoMigrate),
  endsTransaction: endsPostgresTransaction,
};

/**
 * A missing inbox table or claim function is a setup mistake: say the fix, naming the store that met it,
 * instead of "relation does not exist".
 *
 * @example
 * ```ts
 * throw explainPostgresError(error, 'service_pay_inbox', 'PostgresStore');
 * ```
 */
export function explainPostgresError(error: unknown, tableName: string, store: string, autoMigrate = false): unknown {
  const code = sqlState(error);
  if (code === '42P01') {
    return new MissingTableError(
      `${store}: the inbox table ${tableName} does not exist; ${migrateAdvice(autoMigrate)}.`,
      { cause: error },
    );
  }
  // The claim functions are made with the table: missing, either the table is missing too or an older
  // version made it, and migrate() makes whatever is not there.
  if (code === '42883' && /_(claim|take)\b/.test(describe(error))) {
    return new MissingTableError(
      `${store}: the inbox table ${tableName} or its claim function does not exist; ${migrateAdvice(autoMigrate)}.`,
      { cause: error },
    );
  }
  return error;
}

/**
 * The SQLSTATE of a database error, wherever the client put it: node-postgres, postgres.js, Kysely, Knex
 * and TypeORM on the error itself, Drizzle on its `cause`, Prisma in `meta.code` or only in its message.
 */
function sqlState(error: unknown): unknown {
  const e = error as { code?: unknown; cause?: { code?: unknown }; meta?: { code?: unknown } } | null;
  if (e?.meta?.code !== undefined) return e.meta.code;
  // Prisma 7's own code (P2010, raw query failed) is on the error; the database's only in its message.
  const prisma = /Code: `([0-9A-Z]{5})`/.exec(String((error as { message?: unknown } | null)?.message ?? ''));
  if (prisma !== null) return prisma[1];
  return e?.code ?? e?.cause?.code;
}

/** An error's message and its cause's, for telling what a SQLSTATE is about. */
function describe(error: unknown): string {
  const e = error as { message?: unknown; cause?: { message?: unknown } } | null;
  return `${String(e?.message ?? '')} ${String(e?.cause?.message ?? '')}`;
}

/**
 * Statements that would end or restart the delivery's transaction from inside the handler (BEGIN, COMMIT,
 * ROLLBACK, END, ABORT, START TRANSACTION, PREPARE TRANSACTION; savepoints are fine). An ORM's own
 * `transaction()` on `ctx.tx` sends them: COMMIT would commit the credit without the inbox row.
 *
 * @example
 * ```ts
 * endsPostgresTransaction('COMMIT'); // true
 * endsPostgresTransaction('ROLLBACK TO SAVEPOINT s'); // false
 * ```
 */
export function endsPostgresTransaction(text: unknown): boolean {
  if (typeof text !== 'string') return false;
  const match = /^\s*([A-Za-z]+)(?:\s+([A-Za-z]+))?/.exec(text);
  if (match === null) return false;
  const first = (match[1] as string).toLowerCase();
  const second = match[2]?.toLowerCase();
  if (first === 'begin' || first === 'commit' || first === 'end' || first === 'abort') return true;
  if (first === 'rollback') return second !== 'to';
  if (first === 'start' || first === 'prepare') return second === 'transaction';
  return false;
}
