import type { InboxRecord, TransactionClaim, TransactionSession } from '@service-pay/core';
import { type InboxSql, SAVEPOINT } from '@service-pay/sql/sqlite';
import type BetterSqlite3 from 'better-sqlite3';
import {
  ConnectionGate,
  type Driver,
  endedError,
  endsTransaction,
  explainError,
  IN_PROGRESS_RETRY_MS,
  isBusy,
  nestedTransactionError,
  PRUNE_BATCH,
} from './driver.js';

type Database = BetterSqlite3.Database;
type Statement = BetterSqlite3.Statement;

const IN_PROGRESS = { state: 'in-progress', retryAfterMs: IN_PROGRESS_RETRY_MS } as const;

/**
 * better-sqlite3: one connection, synchronous statements. The key is SQLite's write lock: `BEGIN IMMEDIATE`
 * without waiting, so a delivery that finds the database written by another delivery (of this process or
 * any other) answers `in-progress` at once, and the sender retries. A crash, a killed process or a closed
 * connection leaves SQLite to roll the transaction back and free the lock: nothing is orphaned.
 */
export class BetterSqlite3Driver implements Driver<Database> {
  readonly #gate: ConnectionGate;
  #lookup: Statement | undefined;

  constructor(
    private readonly db: Database,
    private readonly sql: InboxSql,
  ) {
    this.#gate = ConnectionGate.of(db);
  }

  async begin(key: string, fingerprint: string): Promise<TransactionClaim<Database>> {
    if (!this.#gate.tryEnter()) return IN_PROGRESS;
    let began = false;
    try {
      if (this.db.inTransaction) {
        throw new Error(
          'SqliteStore: the connection is already in a transaction the store did not open; give the store a ' +
            'connection of its own (new Database(file)) or end that transaction first.',
        );
      }
      began = this.#beginImmediate();
      if (!began) {
        this.#gate.leave();
        return IN_PROGRESS;
      }
      this.#lookup ??= this.db.prepare(this.sql.lookup);
      const found = this.#lookup.get(key) as { fingerprint: string } | undefined;
      if (found !== undefined) {
        this.db.exec('ROLLBACK');
        this.#gate.leave();
        return { state: 'completed', fingerprint: found.fingerprint };
      }
      this.db.exec(`SAVEPOINT ${SAVEPOINT}`);
    } catch (error) {
      if (began && this.db.inTransaction) rollbackQuietly(this.db);
      this.#gate.leave();
      throw explainError(error, this.sql.table.name);
    }
    return { state: 'claimed', session: new BetterSqlite3Session(this.db, this.#gate, this.sql, key, fingerprint) };
  }

  async migrate(): Promise<void> {
    await this.#gate.enter();
    try {
      // Several processes may migrate at once: the write lock (waiting up to the connection's busy timeout)
      // makes them take turns, and IF NOT EXISTS makes the later ones no-ops.
      this.db.exec('BEGIN IMMEDIATE');
      try {
        this.db.exec(this.sql.createTable);
        for (const index of this.sql.createIndexes) this.db.exec(index);
        this.db.exec('COMMIT');
      } catch (error) {
        rollbackQuietly(this.db);
        throw error;
      }
    } finally {
      this.#gate.leave();
    }
  }

  async prune(olderThanMs: number): Promise<number> {
    const statement = this.db.prepare(this.sql.pruneBatch);
    const cutoff = Date.now() - Math.floor(olderThanMs);
    let deleted = 0;
    for (;;) {
      // One batch per turn of the gate: a delivery waiting for the connection gets it between batches.
      await this.#gate.enter();
      let changes: number;
      try {
        changes = statement.run(cutoff, PRUNE_BATCH).changes;
      } finally {
        this.#gate.leave();
      }
      deleted += changes;
      if (changes < PRUNE_BATCH) return deleted;
    }
  }

  /** `BEGIN IMMEDIATE` without waiting for another writer: false when the database is busy. */
  #beginImmediate(): boolean {
    // The connection's own busy timeout (better-sqlite3's default is 5 s) would block the whole process while
    // it waits, since statements are synchronous; for the key the store wants an answer now.
    const previous = Number(this.db.pragma('busy_timeout', { simple: true }));
    this.db.pragma('busy_timeout = 0');
    try {
      this.db.exec('BEGIN IMMEDIATE');
      return true;
    } catch (error) {
      if (isBusy(error)) return false;
      throw error;
    } finally {
      this.db.pragma(`busy_timeout = ${Number.isFinite(previous) ? previous : 5000}`);
    }
  }
}

function rollbackQuietly(db: Database): void {
  try {
    if (db.inTransaction) db.exec('ROLLBACK');
  } catch {
    // SQLite rolls back by itself when it cannot go on (the connection is closed, the disk is gone).
  }
}

type State = 'open' | 'committing' | 'ended';

/** Statement methods that run SQL; the others configure the statement and return it. */
const RUNS = new Set<PropertyKey>(['run', 'get', 'all', 'iterate']);

/** The open transaction of one delivery, on the store's connection. */
class BetterSqlite3Session implements TransactionSession<Database> {
  readonly tx: Database;
  #state: State = 'open';

  constructor(
    private readonly db: Database,
    private readonly gate: ConnectionGate,
    private readonly sql: InboxSql,
    private readonly key: string,
    private readonly fingerprint: string,
  ) {
    this.tx = this.#guard(db);
  }

  async commit(record: InboxRecord): Promise<void> {
    if (this.#state !== 'open') throw endedError();
    this.#state = 'committing';
    try {
      if (!this.db.inTransaction) {
        throw new Error('SqliteStore: the delivery transaction was ended outside the store; nothing was recorded.');
      }
      if (record.outcome === 'rejected') this.db.exec(`ROLLBACK TO ${SAVEPOINT}`);
      const { sql, args } = this.sql.record(this.key, this.fingerprint, record, Date.now());
      this.db.prepare(sql).run(...args);
      this.db.exec('COMMIT');
    } catch (error) {
      rollbackQuietly(this.db);
      throw error;
    } finally {
      this.#state = 'ended';
      this.gate.leave();
    }
  }

  async rollback(_reason: unknown): Promise<void> {
    if (this.#state !== 'open') return;
    this.#state = 'ended';
    // Statements are synchronous: none of the handler's can be running now, so ROLLBACK ends it all.
    rollbackQuietly(this.db);
    this.gate.leave();
  }

  /**
   * The connection as the handler sees it: every better-sqlite3 method works, but running SQL is refused
   * once the transaction has ended (so a late handler can never write outside it, in autocommit), and so
   * are BEGIN/COMMIT/ROLLBACK and `close` (the store ends the transaction).
   */
  #guard(db: Database): Database {
    const open = (text?: unknown) => {
      if (this.#state !== 'open') throw endedError();
      if (endsTransaction(text)) throw nestedTransactionError();
    };
    const guardStatement = (statement: Statement): Statement => {
      const proxy: Statement = new Proxy(statement, {
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
        throw new Error('SqliteStore: do not close ctx.tx; the store ends the transaction.');
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
}
