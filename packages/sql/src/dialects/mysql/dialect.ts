import { InboxTableMismatchError, MissingTableError, migrateAdvice } from '../../auto-migrate.js';
import type { Row, StatementResult } from '../../client.js';
import { statement } from '../../client.js';
import type { ClaimResult, Interruption, InterruptPlan, SqlDialect } from '../../dialect.js';
import { InboxSql } from './inbox-sql.js';
import { mysqlLedgerFlavour } from './ledger.js';
import { type TableName, tableName } from './table-name.js';

/**
 * MySQL 8 and MariaDB 10.6+. On MariaDB the claim is one `INSERT ... RETURNING` that takes the key by
 * inserting its inbox row, waiting for no lock (another transaction holding the row -> a lock error at
 * once), and names the connection. On MySQL 8, which has no `INSERT ... RETURNING`, the key is a row lock on
 * one of a fixed set of lock slots (`<table>_keys`, made by `migrate()`), taken with `FOR UPDATE NOWAIT`,
 * read with the inbox row and the connection's id in one statement, and the inbox row is inserted before
 * COMMIT. Either way the lock ends with the transaction whatever ends it, so nothing session-scoped ever
 * goes back to a pool. Which server it is, a store asks once (`probe`). A running statement is stopped
 * with `KILL QUERY`, a session with `KILL`.
 *
 * @example
 * ```ts
 * const table = mysqlDialect.table('shop.inbox', 'KyselyStore'); // `shop`.`inbox`, slots in `shop`.`inbox_keys`
 * ```
 */
export const mysqlDialect: SqlDialect<TableName> = {
  name: 'MySQL',
  ledger: mysqlLedgerFlavour,
  table: (value, store) => tableName(value, store),
  migrate: (table) => {
    const inbox = new InboxSql(table);
    return { statements: [...inbox.migrateStatements(), ...inbox.migrateSlots()].map(statement), inTransaction: false };
  },
  probe: {
    statement: () => statement('SELECT VERSION() AS version, @@innodb_rollback_on_timeout AS rollback_on_timeout'),
    learned: (table) => table.server.insertReturning !== undefined,
    learn: (rows, table) => {
      table.server.insertReturning = takesInsertReturning(String(rows[0]?.version ?? ''));
      // 1, 1n or true as the clients read it; the server's own spelling is ON.
      table.server.rollbackOnTimeout = /^(?:1|true|on)$/i.test(String(rows[0]?.rollback_on_timeout ?? ''));
    },
    // The writing claim refused as a syntax error: the server is no longer MariaDB (a failover to MySQL).
    unlearn: (error, table) => {
      if (table.server.insertReturning !== true || !serverCodes(error).includes(1064)) return false;
      table.server.insertReturning = undefined;
      return true;
    },
  },
  claim: (table, key, row) =>
    row !== undefined && table.server.insertReturning === true
      ? new InboxSql(table).take(key, row.fingerprint, row.draft)
      : new InboxSql(table).claim(key),
  readClaim(rows: readonly Row[], table, store): ClaimResult {
    const row = rows[0];
    if (row === undefined) throw missingSlots(store, table.name, 'has no rows');
    const found = row.fingerprint;
    // A duplicate's claim holds the key's row (or slot) until its ROLLBACK; a delivery that meets it then reads
    // the recorded row (`recorded`), so the answer need not wait for that ROLLBACK.
    if ('existed' in row) {
      // The writing claim: the row it returns is the one it inserted, or the one the key had.
      if (Number(row.existed) === 1)
        return { state: 'completed', fingerprint: String(found), answerBeforeRollback: true };
      return { state: 'free', session: Number(row.id), written: true };
    }
    if (found !== null && found !== undefined) {
      return { state: 'completed', fingerprint: String(found), answerBeforeRollback: true };
    }
    return { state: 'free', session: Number(row.id), written: false };
  },
  isLockBusy: isMySqlLockBusy,
  recorded: (table, key) => ({
    statement: new InboxSql(table).recorded(key),
    fingerprint: (rows) => (rows[0] === undefined ? undefined : String(rows[0].fingerprint)),
  }),
  abortsTransaction: (error, table) => rollsTransactionBack(serverCodes(error), table.server.rollbackOnTimeout),
  record: (table, key, fingerprint, record) => new InboxSql(table).record(key, fingerprint, record),
  recordApart: (table, key, fingerprint, record) => new InboxSql(table).recordApart(key, fingerprint, record),
  pruneBatch: (table, batch, olderThanMs) => new InboxSql(table).pruneBatch(batch, olderThanMs),
  deleted: (result: StatementResult) => result.affected,
  interrupt: interruptMySql,
  explainError: (error, table, store, autoMigrate) => explainMySqlError(error, table.name, store, autoMigrate),
  whatIsMissing: (table, store) => {
    const parts = table.name.split('.');
    const name = parts.pop() as string;
    const schema = parts[0] ?? null;
    const count = (where: string) =>
      `(SELECT count(*) FROM information_schema.${where} WHERE table_schema = COALESCE(?, DATABASE()) AND table_name = ?`;
    return {
      statement: {
        sql:
          `SELECT ${count('tables')}) AS inbox, ${count('tables')}) AS slots, ` +
          `${count('columns')} AND column_name IN (${INBOX_COLUMNS.map(() => '?').join(', ')})) AS columns`,
        values: [schema, name, schema, `${name}_keys`, schema, name, ...INBOX_COLUMNS],
      },
      explain: (rows) => explainMissing(rows[0], table.name, store),
    };
  },
  endsTransaction: endsMySqlTransaction,
};

/**
 * KILL takes no condition (no subquery, no function), so the connection is looked at first, on the
 * interrupting connection: gone, nothing to end; idle, no statement to stop. MariaDB names the statement
 * running (`QUERY_ID`) and stops exactly that one with `KILL QUERY ID`, which stops nothing once it has
 * ended; MySQL has no such form and stops the connection's statement (`KILL QUERY`), sent only while the
 * rollback has not ended (the store checks between the two).
 */
function interruptMySql(session: unknown, how: Interruption): InterruptPlan | undefined {
  if (typeof session !== 'number' || !Number.isSafeInteger(session)) return undefined;
  return {
    look: { sql: 'SELECT * FROM information_schema.PROCESSLIST WHERE ID = ?', values: [session] },
    stop: (rows) => {
      const row = rows[0];
      if (row === undefined) return undefined;
      if (how === 'session') return { sql: 'KILL ?', values: [session] };
      if (String(column(row, 'COMMAND')) === 'Sleep') return undefined;
      const query = String(column(row, 'QUERY_ID') ?? '');
      return /^\d{1,19}$/.test(query)
        ? { sql: `KILL QUERY ID ${query}`, values: [] }
        : { sql: 'KILL QUERY ?', values: [session] };
    },
  };
}

/** A column of an information_schema row, whatever case the client gave its name. */
function column(row: Row, name: string): unknown {
  if (name in row) return row[name];
  const key = Object.keys(row).find((k) => k.toUpperCase() === name);
  return key === undefined ? undefined : row[key];
}

/** MariaDB 10.5 and later take `INSERT ... RETURNING`; MySQL (8.4 included) and older MariaDB do not. */
function takesInsertReturning(version: string): boolean {
  // A proxy may answer with the handshake's form, `5.5.5-10.11.6-MariaDB`.
  const match = /^(?:5\.5\.5-)?(\d+)\.(\d+)/.exec(version);
  if (match === null || !/mariadb/i.test(version)) return false;
  const [major, minor] = [Number(match[1]), Number(match[2])];
  return major > 10 || (major === 10 && minor >= 5);
}

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
 * Whether an error with these server codes rolled the whole transaction back, not only its statement: a
 * deadlock (1213) and running out of room for row locks (1206) always do; a lock wait timeout (1205) does
 * on a server started with `innodb_rollback_on_timeout = ON`, and otherwise rolls back its statement alone.
 *
 * @example
 * ```ts
 * rollsTransactionBack([1205], false); // false: the transaction goes on without that statement
 * ```
 */
function rollsTransactionBack(codes: readonly number[], rollbackOnTimeout: boolean): boolean {
  return codes.some((code) => code === 1213 || code === 1206 || (code === 1205 && rollbackOnTimeout));
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
  const codes = serverCodes(error);
  if (prismaMissingTable || codes.includes(1146)) {
    // The claim reads the slots first, so the server names them even when nothing is there: with autoMigrate
    // off the store then looks which is missing (whatIsMissing).
    return new MissingTableError(
      `${store}: the inbox table ${table} or its lock slots ${table}_keys does not exist; ${migrateAdvice(autoMigrate)}.`,
      { cause: error },
    );
  }
  // ER_BAD_FIELD_ERROR: a table of that name that migrate() did not make (CREATE TABLE IF NOT EXISTS keeps it).
  if (codes.includes(1054)) return mismatch(store, table, firstLine(error), error);
  return error;
}

/** The inbox's columns, as `migrate()` makes them. */
const INBOX_COLUMNS = ['key', 'fingerprint', 'payment_id', 'delivery_id', 'source', 'outcome', 'reason', 'created_at'];

/** What a probe of the inbox found, as the fix: no table, an inbox without its slots, or other columns. */
function explainMissing(row: Row | undefined, table: string, store: string): Error | undefined {
  if (row === undefined) return undefined;
  if (Number(row.inbox) === 0) {
    return new MissingTableError(
      `${store}: the inbox table ${table} does not exist; ${migrateAdvice(false)}; ${BY_HAND}.`,
    );
  }
  if (Number(row.columns) !== INBOX_COLUMNS.length) return mismatch(store, table, 'it has other columns');
  return Number(row.slots) === 0 ? missingSlots(store, table, 'does not exist') : undefined;
}

/** A table of the inbox's name that `migrate()` did not make: `migrate()` keeps it, so only a rename helps. */
function mismatch(store: string, table: string, what: string, cause?: unknown): InboxTableMismatchError {
  return InboxTableMismatchError.of(store, table, what, 'docs/sql/mysql-inbox.sql', cause);
}

/** How to make the inbox in your own migrations, for every store on MySQL. */
const BY_HAND =
  'to make it in your own migrations instead, apply docs/sql/mysql-inbox.sql of the service-pay repository ' +
  '(the table and the <table>_keys lock slots every store takes its key in; docs/inbox-schema.md)';

/** The lock slots table missing or empty: an inbox made by hand without it. */
function missingSlots(store: string, table: string, what: string, cause?: unknown): MissingTableError {
  return new MissingTableError(
    `${store}: the lock slots table ${table}_keys ${what}: a table made by hand needs it too (every store on ` +
      `MySQL takes the key's lock there; docs/sql/mysql-inbox.sql of the service-pay repository makes it, ` +
      'docs/inbox-schema.md). Run await store.migrate() once at start-up (it adds the slots and keeps the inbox ' +
      'and its rows), apply that file, or leave autoMigrate on (the default) and the store adds them.',
    cause === undefined ? undefined : { cause },
  );
}

/** An error's messages, its causes' included (Drizzle and Prisma wrap the server's). */
function messages(error: unknown): string {
  const parts: string[] = [];
  let value = error as { message?: unknown; cause?: unknown } | null | undefined;
  for (let depth = 0; value !== null && typeof value === 'object' && depth < 4; depth++) {
    parts.push(String(value.message ?? ''));
    value = value.cause as typeof value;
  }
  return parts.join(' ');
}

/** The first line of an error's message, the server's words. */
function firstLine(error: unknown): string {
  return (/Unknown column '[^']*'[^\n]*/.exec(messages(error))?.[0] ?? messages(error).split('\n')[0] ?? '').slice(
    0,
    200,
  );
}

/**
 * The server's error numbers in an error as each client wraps it: mysql2's `errno` on the error, Drizzle's
 * on its `cause`, Prisma's in `meta.driverAdapterError.cause` (`code`, or `originalCode` as text) in a
 * transaction or only in its message ("Raw query failed. Code: `1146`", outside one).
 */
function serverCodes(error: unknown): number[] {
  const codes: number[] = [];
  const seen = new Set<unknown>();
  const visit = (value: unknown, depth: number) => {
    if (value === null || typeof value !== 'object' || seen.has(value) || depth > 4) return;
    seen.add(value);
    const e = value as {
      errno?: unknown;
      code?: unknown;
      originalCode?: unknown;
      cause?: unknown;
      meta?: { driverAdapterError?: unknown };
    };
    for (const candidate of [e.errno, e.code]) if (typeof candidate === 'number') codes.push(candidate);
    // Prisma's driver adapter error, as text: `{ originalCode: '1213', kind: 'TransactionWriteConflict' }`.
    if (typeof e.originalCode === 'string' && /^\d+$/.test(e.originalCode)) codes.push(Number(e.originalCode));
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
