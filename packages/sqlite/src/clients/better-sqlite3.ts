import {
  abortedTransactionError,
  endedError,
  oneConnection,
  type SqlClient,
  type Statement,
  type StatementResult,
} from '@service-pay/sql';
import { endsSqliteTransaction } from '@service-pay/sql/sqlite';
import type BetterSqlite3 from 'better-sqlite3';

type Database = BetterSqlite3.Database;
type Prepared = BetterSqlite3.Statement;

/**
 * better-sqlite3 (and libsql, the same API): one connection, synchronous statements, `ctx.tx` the
 * `Database` itself inside the delivery's transaction. The transaction begins IMMEDIATE without waiting:
 * while another connection (another process) writes, BEGIN answers SQLITE_BUSY at once and the delivery
 * is answered in-progress. A crash, a killed process or a closed connection leaves SQLite to roll back and
 * free the lock: nothing is orphaned.
 *
 * @example
 * ```ts
 * const client = betterSqlite3Client(new Database('shop.db'), 'SqliteStore');
 * ```
 */
export function betterSqlite3Client(db: Database, store: string): SqlClient<Database> {
  const run = async (statement: Statement): Promise<StatementResult> => {
    const prepared = db.prepare(statement.sql);
    const values = statement.values as unknown[];
    if (prepared.reader) {
      const rows = prepared.all(...values) as Record<string, unknown>[];
      return { rows, affected: rows.length };
    }
    return { rows: [], affected: prepared.run(...values).changes };
  };
  const client: SqlClient<Database> = {
    async transaction(work) {
      if (db.inTransaction) {
        throw new Error(
          `${store}: the connection is already in a transaction the store did not open; give the store a ` +
            'connection of its own (new Database(file)) or end that transaction first.',
        );
      }
      beginImmediate(db);
      try {
        await work(db);
        db.exec('COMMIT');
      } catch (error) {
        rollbackQuietly(db);
        throw error;
      }
    },
    query: async (tx, statement) => {
      if (!tx.inTransaction) {
        throw new Error(`${store}: the delivery transaction was ended outside the store; nothing was recorded.`);
      }
      return run(statement);
    },
    queryOutside: run,
    rawTextMethods: ['prepare', 'exec'],
    guard: (tx, ended) => guardDatabase(tx, ended, store),
  };
  return oneConnection(client, db);
}

/** `BEGIN IMMEDIATE` without waiting for another writer: SQLITE_BUSY at once when the database is busy. */
function beginImmediate(db: Database): void {
  // The connection's own busy timeout (better-sqlite3's default is 5 s) would block the whole process while
  // it waits, since statements are synchronous; for the key the store wants an answer now.
  const previous = Number(db.pragma('busy_timeout', { simple: true }));
  db.pragma('busy_timeout = 0');
  try {
    db.exec('BEGIN IMMEDIATE');
  } finally {
    db.pragma(`busy_timeout = ${Number.isFinite(previous) ? previous : 5000}`);
  }
}

function rollbackQuietly(db: Database): void {
  try {
    if (db.inTransaction) db.exec('ROLLBACK');
  } catch {
    // SQLite rolls back by itself when it cannot go on (the connection is closed, the disk is gone).
  }
}

/** Statement methods that run SQL; the others configure the statement and return it. */
const RUNS = new Set<PropertyKey>(['run', 'get', 'all', 'iterate']);

/**
 * The connection as the handler sees it: every better-sqlite3 method works, but running SQL is refused
 * once the delivery has ended or SQLite has rolled its transaction back (so the handler can never write
 * outside it, in autocommit), and so are BEGIN/COMMIT/ROLLBACK and `close` (the store ends the
 * transaction). Statements are synchronous: none of the handler's can still run when the store rolls back.
 */
function guardDatabase(db: Database, ended: () => boolean, store: string): Database {
  const open = (text?: unknown) => {
    if (ended()) throw endedError(store);
    // SQLite rolled the transaction back by itself (a full disk, an I/O error) after a statement the
    // handler caught: what it sends now would commit on its own.
    if (!db.inTransaction) throw abortedTransactionError(store, new Error('SQLite ended the transaction'));
    if (endsSqliteTransaction(text)) {
      throw new Error(
        `${store}: ctx.tx is already in the delivery transaction; do not BEGIN, COMMIT or ROLLBACK through it. ` +
          'Use SAVEPOINT (or better-sqlite3 transaction(), which nests as a savepoint) for nested work; the store commits.',
      );
    }
  };
  const guardStatement = (statement: Prepared): Prepared => {
    const proxy: Prepared = new Proxy(statement, {
      get(target, property) {
        const value = Reflect.get(target, property, target);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          if (RUNS.has(property)) open();
          const result = (value as (...a: unknown[]) => unknown).apply(target, args);
          return result === target ? proxy : result; // bind(), pluck(), raw()... chain on the guarded one
        };
      },
    });
    return proxy;
  };
  const guardTransaction = (run: BetterSqlite3.Transaction<(...args: unknown[]) => unknown>) => {
    const call =
      (variant: (...args: unknown[]) => unknown) =>
      (...args: unknown[]) => {
        open();
        return variant(...args);
      };
    return Object.assign(call(run), {
      default: call(run.default),
      deferred: call(run.deferred),
      immediate: call(run.immediate),
      exclusive: call(run.exclusive),
    });
  };
  const methods: Partial<Record<keyof Database, unknown>> = {
    prepare: (source: string) => {
      open(source);
      return guardStatement(db.prepare(source));
    },
    exec: (source: string) => {
      open(source);
      db.exec(source);
      return proxyDb;
    },
    pragma: (source: string, options?: BetterSqlite3.PragmaOptions) => {
      open();
      return db.pragma(source, options);
    },
    transaction: (fn: (...args: unknown[]) => unknown) => guardTransaction(db.transaction(fn)),
    close: () => {
      throw new Error(`${store}: do not close ctx.tx; the store ends the transaction.`);
    },
  };
  const proxyDb: Database = new Proxy(db, {
    get(target, property) {
      if (Object.hasOwn(methods, property)) return methods[property as keyof Database];
      const value = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return proxyDb;
}
