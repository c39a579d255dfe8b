import { InboxTableMismatchError, MissingTableError, migrateAdvice } from '../../auto-migrate.js';
import type { Row, StatementResult } from '../../client.js';
import { statement } from '../../client.js';
import type { ClaimResult, Interruption, SqlDialect } from '../../dialect.js';
import { InboxSql, microsecondsOf } from './inbox-sql.js';
import { postgresLedgerFlavour } from './ledger.js';
import { readRecordText } from './record-text.js';
import { quoteLiteral } from './sql-text.js';
import { CLAIM_FUNCTION_SUFFIX, TAKE_FUNCTION_SUFFIX, type TableName, tableName } from './table-name.js';

/** How long ending a backend waits for it to be gone (its locks freed). */
const TERMINATE_WAIT_MS = 5_000;

/** The backend a claim ran on and its transaction's start: together they name that transaction. */
interface PostgresSession {
  readonly pid: number;
  readonly xactUs: string;
}

/**
 * The take function's answer (`w,<pid>,<xact_us>`, `r,<fingerprint>` or `h`; see inbox-sql.ts) as the claim's
 * result. Every answer but `w` leaves nothing this transaction could keep from another delivery of the key
 * (a lock held by it only makes another claim read the recorded row), so the store answers it without
 * waiting for its ROLLBACK.
 */
function readTake(text: string, store: string): ClaimResult {
  const kind = text.charCodeAt(0);
  if (kind === 119 /* w */ && text.charCodeAt(1) === 44) {
    const comma = text.indexOf(',', 2);
    const pid = Number(text.slice(2, comma));
    const xactUs = text.slice(comma + 1);
    if (comma > 2 && Number.isSafeInteger(pid) && xactUs !== '') {
      const session: PostgresSession = { pid, xactUs };
      return { state: 'free', session, written: true };
    }
  } else if (kind === 114 /* r */ && text.charCodeAt(1) === 44) {
    return { state: 'completed', fingerprint: text.slice(2), answerBeforeRollback: true };
  } else if (text === 'h') {
    return { state: 'held', answerBeforeRollback: true };
  }
  throw new TypeError(`${store}: the inbox's take function answered ${JSON.stringify(text.slice(0, 80))}.`);
}

/**
 * The claim function's answer (one text column `claim`: its row as text, locked, fingerprint or null, pid,
 * xact_us) as the claim's result. A recorded row is read before the key's lock is tried, and then the lock is
 * left alone: a claim that does not run holds nothing unless `locked` says so, and its ROLLBACK need not be
 * waited for.
 */
function readClaimRow(text: string): ClaimResult {
  const [locked, fingerprint, pid, xactUs] = readRecordText(text);
  const answerBeforeRollback = locked !== 't';
  if (fingerprint !== null && fingerprint !== undefined) {
    return { state: 'completed', fingerprint, answerBeforeRollback };
  }
  if (locked !== 't') return { state: 'held', answerBeforeRollback };
  const session: PostgresSession = { pid: Number(pid), xactUs: xactUs ?? '' };
  return { state: 'free', session, written: false };
}

/**
 * PostgreSQL: the key is a transaction-level advisory lock taken without waiting by the inbox table's
 * take function, which writes the key's row in the same round trip (or, the key held or recorded, reads it),
 * and a running statement is interrupted by `pg_cancel_backend`, a session ended by `pg_terminate_backend`,
 * both only while that backend is still in the claiming transaction.
 *
 * @example
 * ```ts
 * const table = postgresDialect.table(undefined, 'KyselyStore'); // "service_pay_inbox"
 * ```
 */
export const postgresDialect: SqlDialect<TableName> = {
  name: 'PostgreSQL',
  ledger: postgresLedgerFlavour,
  table: (value, store) => tableName(value, store),
  migrate: (table) => ({ statements: new InboxSql(table).migrateStatements().map(statement), inTransaction: true }),
  claim: (table, key, row) =>
    statement(
      row === undefined ? new InboxSql(table).claim(key) : new InboxSql(table).take(key, row.fingerprint, row.draft),
    ),
  readClaim(rows: readonly Row[], _table, store): ClaimResult {
    const row = rows[0];
    if (typeof row?.take === 'string') return readTake(row.take, store);
    if (typeof row?.claim === 'string') return readClaimRow(row.claim);
    throw new TypeError(
      `${store}: the inbox's claim function answered ${JSON.stringify(row)}, not its answer as text.`,
    );
  },
  // The advisory lock answers `false` rather than failing.
  isLockBusy: () => false,
  // Refused with 25P02 (in_failed_sql_transaction) once a statement of the transaction failed.
  soundCheck: statement('SELECT 1 AS sound'),
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
    // The condition runs with the call: a backend since lent to another delivery has another xact_start.
    return {
      statement: statement(
        `SELECT ${call} FROM pg_stat_activity WHERE pid = ${pid} AND ${microsecondsOf('xact_start')} = ${xactUs}`,
      ),
    };
  },
  explainError: (error, table, store, autoMigrate) => explainPostgresError(error, table.name, store, autoMigrate),
  whatIsMissing: (table, store) => ({
    statement: statement(
      `SELECT to_regclass(${quoteLiteral(table.sql)}) IS NOT NULL AS has_table, ` +
        `to_regproc(${quoteLiteral(table.claimFunctionSql)}) IS NOT NULL AS has_claim, ` +
        `to_regproc(${quoteLiteral(table.takeFunctionSql)}) IS NOT NULL AS has_take, ` +
        `(SELECT count(*)::int FROM pg_attribute WHERE attrelid = to_regclass(${quoteLiteral(table.sql)}) AND NOT attisdropped AND attname IN (${INBOX_COLUMNS.map(quoteLiteral).join(', ')})) AS columns`,
    ),
    explain: (rows) => explainMissing(rows[0], table, store),
  }),
  endsTransaction: endsPostgresTransaction,
};

/** The inbox's columns, as `migrate()` makes them. */
const INBOX_COLUMNS = ['key', 'fingerprint', 'payment_id', 'delivery_id', 'source', 'outcome', 'reason', 'created_at'];

/** How to make the inbox in your own migrations, for every store on PostgreSQL. */
const BY_HAND =
  'to make it in your own migrations instead, apply docs/sql/postgres-inbox.sql of the service-pay repository ' +
  '(the table, its indexes and the claim functions the store calls; docs/inbox-schema.md)';

/**
 * What a probe of the inbox found, as the fix: no table at all, or a table made by hand without the claim
 * functions every store but `PostgresStore` calls (`PostgresStore` needs none, and never asks).
 */
function explainMissing(row: Row | undefined, table: TableName, store: string): Error | undefined {
  if (row === undefined) return undefined;
  const name = table.name;
  if (row.has_table !== true) {
    return new MissingTableError(
      `${store}: the inbox table ${name} does not exist; ${migrateAdvice(false)}; ${BY_HAND}.`,
    );
  }
  if (Number(row.columns) !== INBOX_COLUMNS.length) return mismatch(store, name, 'it has other columns');
  const missing = [
    row.has_claim !== true ? `${name}${CLAIM_FUNCTION_SUFFIX}` : '',
    row.has_take !== true ? `${name}${TAKE_FUNCTION_SUFFIX}` : '',
  ].filter((fn) => fn !== '');
  if (missing.length === 0) return undefined;
  const functions =
    missing.length === 1 ? `claim function ${missing[0]} does` : `claim functions ${missing.join(' and ')} do`;
  return new MissingTableError(
    `${store}: the inbox table ${name} exists but its ${functions} not: a table made by hand needs them too for ` +
      `${store} (docs/sql/postgres-inbox.sql of the service-pay repository creates both; docs/inbox-schema.md). ` +
      'Run await store.migrate() once at start-up (it adds them and keeps the table and its rows), apply that ' +
      'file, or leave autoMigrate on (the default) and the store adds them.',
  );
}

/** A table of the inbox's name that `migrate()` did not make: `migrate()` keeps it, so only a rename helps. */
function mismatch(store: string, table: string, what: string, cause?: unknown): InboxTableMismatchError {
  return InboxTableMismatchError.of(store, table, what, 'docs/sql/postgres-inbox.sql', cause);
}

/** A claim function named in an undefined_function error. */
const MISSING_FUNCTION = new RegExp(`(${CLAIM_FUNCTION_SUFFIX}|${TAKE_FUNCTION_SUFFIX})\\b`);

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
    const byHand = autoMigrate ? '' : `; ${BY_HAND}`;
    return new MissingTableError(
      `${store}: the inbox table ${tableName} does not exist; ${migrateAdvice(autoMigrate)}${byHand}.`,
      { cause: error },
    );
  }
  // The claim functions are made with the table: missing, the table is missing too or was made by hand, and
  // migrate() makes whatever is not there (with autoMigrate off the store then looks which: whatIsMissing).
  if (code === '42883' && MISSING_FUNCTION.test(describe(error))) {
    return new MissingTableError(
      `${store}: the inbox table ${tableName} or its claim function does not exist; ${migrateAdvice(autoMigrate)}.`,
      { cause: error },
    );
  }
  // undefined_column: a table of that name that migrate() did not make (CREATE TABLE IF NOT EXISTS keeps it).
  if (code === '42703') return mismatch(store, tableName, columnProblem(error), error);
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

/** What the database said is wrong, in a few words: `column "x" does not exist`, or its first line. */
function columnProblem(error: unknown): string {
  const message = String((error as { message?: unknown } | null)?.message ?? error);
  return /column "?[\w.]+"? does not exist/.exec(message)?.[0] ?? message.split('\n')[0]?.slice(0, 200) ?? '';
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
