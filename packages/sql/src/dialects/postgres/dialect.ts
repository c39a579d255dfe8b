import { InboxTableMismatchError, MissingTableError, migrateAdvice } from '../../auto-migrate.js';
import type { Row, StatementResult } from '../../client.js';
import { statement } from '../../client.js';
import type { ClaimResult, Interruption, SqlDialect } from '../../dialect.js';
import { InboxSql } from './inbox-sql.js';
import { readRecordText } from './record-text.js';
import { quoteLiteral } from './sql-text.js';
import { type TableName, tableName } from './table-name.js';

/** How long ending a backend waits for it to be gone (its locks freed). */
const TERMINATE_WAIT_MS = 5_000;

/** The backend a claim ran on and its transaction's start: together they name that transaction. */
interface PostgresSession {
  readonly pid: number;
  readonly xactUs: string;
}

/** A claim's answer: the take function's (`inserted` set) or the claim function's (`inserted` undefined). */
interface ClaimFields {
  readonly locked: boolean;
  readonly inserted: boolean | undefined;
  readonly fingerprint: string | null;
  readonly pid: string | null;
  readonly xactUs: string | null;
}

/**
 * The claim's row (one text column, `take` or `claim`: the function's row as text) as its fields. The take
 * function's row has `inserted` second; the claim function's has none.
 */
function claimFields(row: Row | undefined, store: string): ClaimFields {
  const take = row?.take;
  const text = typeof take === 'string' ? take : row?.claim;
  if (typeof text !== 'string') {
    throw new TypeError(`${store}: the inbox's claim function answered ${JSON.stringify(row)}, not its row as text.`);
  }
  const fields = readRecordText(text);
  const [locked, inserted, fingerprint, pid, xactUs] =
    text === take ? fields : [fields[0], undefined, ...fields.slice(1)];
  return {
    locked: locked === 't',
    inserted: inserted === undefined ? undefined : inserted === 't',
    fingerprint: fingerprint ?? null,
    pid: pid ?? null,
    xactUs: xactUs ?? null,
  };
}

/**
 * PostgreSQL: the key is a transaction-level advisory lock taken without waiting by the inbox table's
 * claim function (the key's row read, then, if there is none, the lock tried, in one round trip), and a
 * running statement is interrupted by `pg_cancel_backend`, a session ended by `pg_terminate_backend`, both
 * only while that backend is still in the claiming transaction.
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
  readClaim(rows: readonly Row[], _table, store): ClaimResult {
    const claim = claimFields(rows[0], store);
    const written = claim.inserted === true;
    // A recorded row is read before the key's lock is tried, and then the lock is left alone: a claim that
    // does not run holds nothing unless `locked` says so (a function made by an older version takes the lock
    // first), and its ROLLBACK need not be waited for.
    const answerBeforeRollback = !claim.locked;
    if (!written && claim.fingerprint !== null) {
      return { state: 'completed', fingerprint: claim.fingerprint, answerBeforeRollback };
    }
    // The writing claim that took the lock always wrote or found a row; neither is never this delivery's.
    if (!claim.locked || claim.inserted === false) return { state: 'held', answerBeforeRollback };
    const session: PostgresSession = { pid: Number(claim.pid), xactUs: claim.xactUs ?? '' };
    return { state: 'free', session, written };
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
    return statement(
      `SELECT ${call} FROM pg_stat_activity WHERE pid = ${pid} AND (extract(epoch FROM xact_start) * 1000000)::bigint = ${xactUs}`,
    );
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
  const missing = [row.has_claim !== true ? `${name}_claim` : '', row.has_take !== true ? `${name}_take` : ''].filter(
    (fn) => fn !== '',
  );
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
  if (code === '42883' && /_(claim|take)\b/.test(describe(error))) {
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
