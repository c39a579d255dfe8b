import type { InboxRecord, TransactionalStore, TransactionClaim, TransactionSession } from '@service-pay/core';
import type { Pool, PoolConnection, RowDataPacket } from 'mysql2/promise';
import { InboxSql, type Statement } from './inbox-sql.js';
import { tableName } from './table-name.js';
import { endedError, guardConnection } from './transaction-guard.js';

/**
 * Options of `MySqlStore`.
 *
 * @example
 * ```ts
 * import mysql from 'mysql2/promise';
 * const options: MySqlStoreOptions = { pool: mysql.createPool(process.env.DATABASE_URL!) };
 * ```
 */
export interface MySqlStoreOptions {
  /** A mysql2 promise pool. Each delivery holds one of its connections for its transaction. */
  pool: Pool;
  /** `name` or `database.name`; default `service_pay_inbox`. */
  tableName?: string | undefined;
}

/** Retry-After for a key another session holds: it does not say how long it will take. */
const IN_PROGRESS_RETRY_MS = 1_000;
/** Rows deleted per statement by `prune`. */
const PRUNE_BATCH = 5_000;
/** How long a rollback may queue behind a running statement before the session is killed instead. */
const ROLLBACK_GRACE_MS = 200;

/** How long ending a session may wait for a connection of the pool to send KILL on. */
const KILL_WITHIN_MS = 1_000;
/** How long a killed session may take to close its connection before it is closed from this side. */
const KILLED_WAIT_MS = 2_000;

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref?.());
const ignore = () => {};

/**
 * The transactional store on MySQL 8 and MariaDB 10.6+ (mysql2): the handler runs inside the store's
 * transaction (`ctx.tx` is the delivery's `PoolConnection`), and its writes and the dedupe record commit
 * together or not at all.
 *
 * For each fresh key the store takes a pool connection, takes the key without waiting (`GET_LOCK(name, 0)`,
 * held by another session -> 409 at once, in any process), opens a transaction, reads the inbox row (found
 * -> duplicate or conflict), takes a savepoint, runs the handler, inserts the row, commits, and only then
 * releases the lock. `GET_LOCK` is per session: the store releases it before the connection goes back to
 * the pool, and destroys the connection instead whenever it cannot be sure (a failed release, a rollback
 * that had to kill the session), so no lock ever reaches the next user of a pooled connection. A crash or a
 * lost connection ends the session: the server rolls back and frees the key at once.
 *
 * @example
 * ```ts
 * import { createWebhookHandler } from '@service-pay/core';
 * import { MySqlStore } from '@service-pay/mysql';
 * import mysql from 'mysql2/promise';
 *
 * const store = new MySqlStore({ pool: mysql.createPool(process.env.DATABASE_URL!) });
 * await store.migrate();
 * const handle = createWebhookHandler({ secret, store, onPaymentPaid: async (event, ctx) => {
 *   await ctx.tx.query('update orders set paid = true where order_no = ?', [event.orderNo]);
 * } });
 * ```
 */
export class MySqlStore implements TransactionalStore<PoolConnection> {
  readonly kind = 'transactional';
  /** The inbox table's name as given (default `service_pay_inbox`). */
  readonly tableName: string;
  readonly #pool: Pool;
  readonly #sql: InboxSql;

  constructor(options: MySqlStoreOptions) {
    const pool = (options as Partial<MySqlStoreOptions> | null)?.pool;
    if (
      pool === null ||
      typeof pool !== 'object' ||
      typeof pool.getConnection !== 'function' ||
      typeof pool.query !== 'function'
    ) {
      throw new TypeError(
        "MySqlStore: options.pool must be a mysql2 promise pool (mysql.createPool(...) from 'mysql2/promise').",
      );
    }
    const table = tableName(options.tableName);
    this.tableName = table.name;
    this.#pool = pool;
    this.#sql = new InboxSql(table);
  }

  /**
   * Takes `key` and opens a transaction, or says why not: another session holds it (`in-progress`, without
   * waiting) or it was recorded before (`completed`, with the recorded fingerprint).
   */
  async begin(key: string, fingerprint: string): Promise<TransactionClaim<PoolConnection>> {
    const connection = await this.#pool.getConnection();
    // A connection that drops while checked out emits 'error'; with no listener Node would throw it. The
    // statement in flight fails by itself, and that is where the session learns of it.
    connection.on('error', ignore);
    const lease = new Lease(connection);
    let locked = false;
    try {
      const [lockRows] = await run<RowDataPacket[]>(connection, this.#sql.lock(key));
      locked = Number(lockRows[0]?.locked) === 1;
      if (!locked) {
        lease.release();
        return { state: 'in-progress', retryAfterMs: IN_PROGRESS_RETRY_MS };
      }
      const sessionId = Number(lockRows[0]?.id);
      await connection.query('START TRANSACTION');
      const [rows] = await run<RowDataPacket[]>(connection, this.#sql.read(key));
      const found = rows[0] as { fingerprint: string } | undefined;
      if (found !== undefined) {
        await connection.query('ROLLBACK');
        await run(connection, this.#sql.unlock(key));
        lease.release();
        return { state: 'completed', fingerprint: found.fingerprint };
      }
      await connection.query(this.#sql.savepoint());
      const kill = () => this.#kill(sessionId);
      return { state: 'claimed', session: new MySqlSession(lease, this.#sql, key, fingerprint, kill) };
    } catch (error) {
      // The session may hold the lock or an open transaction: never give it back to the pool.
      lease.destroy();
      throw explainError(error, this.tableName);
    }
  }

  /** Creates the inbox table and its indexes if missing; idempotent. */
  async migrate(): Promise<void> {
    await this.#pool.query(this.#sql.migrate());
  }

  /**
   * Deletes inbox rows older than `olderThanMs`, in batches; resolves with how many. A pruned payment would
   * be credited again if delivered again: keep rows longer than the sender retries and you reconcile.
   */
  async prune(options: { olderThanMs: number }): Promise<number> {
    const olderThanMs = (options as { olderThanMs?: unknown } | null)?.olderThanMs;
    if (typeof olderThanMs !== 'number' || !Number.isFinite(olderThanMs) || olderThanMs < 0) {
      throw new RangeError(
        `MySqlStore.prune: olderThanMs must be a number of milliseconds >= 0, got ${JSON.stringify(olderThanMs)}.`,
      );
    }
    let deleted = 0;
    for (;;) {
      const { sql, values } = this.#sql.pruneBatch(PRUNE_BATCH, olderThanMs);
      const [result] = await this.#pool.query(sql, values);
      const count = (result as { affectedRows?: number }).affectedRows ?? 0;
      deleted += count;
      if (count < PRUNE_BATCH) return deleted;
    }
  }

  /**
   * Ends a session from another connection of the pool: the server rolls back its transaction and frees its
   * lock. Bounded: a pool with no connection to spare cannot do it, and the key then stays taken until the
   * handler's statement ends by itself (size the pool one above the deliveries you run at once).
   */
  async #kill(sessionId: number): Promise<void> {
    if (!Number.isSafeInteger(sessionId)) return;
    await Promise.race([this.#pool.query('KILL ?', [sessionId]).catch(ignore), pause(KILL_WITHIN_MS)]);
  }
}

/** Runs one bound statement. */
function run<T>(connection: PoolConnection, statement: Statement) {
  return connection.query(statement.sql, statement.values) as unknown as Promise<[T, unknown]>;
}

/** A missing inbox table is a setup mistake: say the fix instead of "Table doesn't exist". */
function explainError(error: unknown, table: string): unknown {
  if ((error as { code?: unknown } | null)?.code === 'ER_NO_SUCH_TABLE') {
    return new Error(
      `MySqlStore: the inbox table ${table} does not exist; run await store.migrate() once at start-up.`,
      {
        cause: error,
      },
    );
  }
  return error;
}

/** A checked-out connection, given back (or destroyed) exactly once. */
class Lease {
  #done = false;
  constructor(readonly connection: PoolConnection) {}

  release(): void {
    if (this.#done) return;
    this.#done = true;
    this.connection.removeListener('error', ignore);
    this.connection.release();
  }

  /** Closes the connection instead of pooling it: the server ends the session, its lock and transaction. */
  destroy(): void {
    if (this.#done) return;
    this.#done = true;
    this.connection.destroy();
  }
}

/** One open delivery transaction: the guarded `ctx.tx`, then the inbox row, COMMIT and the lock's release. */
class MySqlSession implements TransactionSession<PoolConnection> {
  readonly tx: PoolConnection;
  #ended = false;

  constructor(
    private readonly lease: Lease,
    private readonly sql: InboxSql,
    private readonly key: string,
    private readonly fingerprint: string,
    private readonly kill: () => Promise<void>,
  ) {
    this.tx = guardConnection(lease.connection, () => this.#ended);
  }

  async commit(record: InboxRecord): Promise<void> {
    if (this.#ended) throw endedError();
    this.#ended = true;
    const { connection } = this.lease;
    try {
      for (const statement of this.sql.record(this.key, this.fingerprint, record)) await run(connection, statement);
      await connection.query('COMMIT');
    } catch (error) {
      // Failed or unknown: end the session, which rolls back whatever is left and frees the key.
      this.lease.destroy();
      throw error;
    }
    // Committed: the row is visible, so the key may go. A failed release must not reach the pool.
    await this.#unlockAndRelease();
  }

  async rollback(): Promise<void> {
    if (this.#ended) return;
    this.#ended = true;
    const { connection } = this.lease;
    // mysql2 queues the ROLLBACK behind a statement of the handler still running (a deadline hit mid-
    // statement): if it has not ended quickly, kill the session instead, which frees the key now.
    const rolledBack = connection.query('ROLLBACK').then(
      () => true,
      () => false,
    );
    const quick = await Promise.race([rolledBack, pause(ROLLBACK_GRACE_MS).then(() => undefined)]);
    if (quick === true) {
      await this.#unlockAndRelease();
      return;
    }
    if (quick === undefined) {
      // The server closes a killed session's connection, which fails the statements mysql2 has queued on it
      // (the handler's, the ROLLBACK); wait for that before closing it from this side, or they never settle.
      await this.kill();
      await Promise.race([rolledBack, pause(KILLED_WAIT_MS)]);
    }
    this.lease.destroy();
  }

  async #unlockAndRelease(): Promise<void> {
    try {
      await run(this.lease.connection, this.sql.unlock(this.key));
      this.lease.release();
    } catch {
      this.lease.destroy();
    }
  }
}
