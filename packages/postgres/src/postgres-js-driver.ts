import { holdTransaction, type InboxRecord, type TransactionClaim, type TransactionSession } from '@service-pay/core';
import type { InboxSql } from '@service-pay/sql/postgres';
import type { Sql, TransactionSql } from 'postgres';
import {
  type Driver,
  endedError,
  endsTransaction,
  explainError,
  IN_PROGRESS_RETRY_MS,
  nestedTransactionError,
  PRUNE_BATCH,
} from './driver.js';

/**
 * postgres.js: each attempt runs inside the client's own `sql.begin(...)`, held open (core's
 * `holdTransaction`) until the pipeline commits or rolls back, so `ctx.tx` is a real `TransactionSql`.
 * The store's statements go through `tx.unsafe(...).simple()`: several in one round trip, values as
 * literals (see sql-text.ts), exactly as on node-postgres.
 */
export class PostgresJsDriver implements Driver<TransactionSql> {
  constructor(
    private readonly sql: Sql,
    private readonly inbox: InboxSql,
  ) {}

  async begin(key: string, fingerprint: string): Promise<TransactionClaim<TransactionSql>> {
    const held = await holdTransaction<TransactionSql>((work) => this.sql.begin(work));
    let results: unknown;
    try {
      results = await held.tx.unsafe(this.inbox.lockAndRead(key)).simple();
    } catch (error) {
      await held.rollback();
      throw explainError(error, this.inbox.table.name);
    }
    const [lockRows, keyRows] = results as [Array<{ locked?: unknown; pid?: unknown }>, Array<{ fingerprint: string }>];
    const locked = lockRows?.[0]?.locked === true;
    const found = keyRows?.[0];
    if (found === undefined && locked) {
      const end = () => terminateBackend(this.sql, lockRows[0]?.pid);
      return { state: 'claimed', session: new PostgresJsSession(held, this.inbox, key, fingerprint, end) };
    }
    // Nothing to do in this transaction; a failed rollback leaves nothing behind either (the server rolls
    // back what a dropped connection held).
    await held.rollback();
    return found === undefined
      ? { state: 'in-progress', retryAfterMs: IN_PROGRESS_RETRY_MS }
      : { state: 'completed', fingerprint: found.fingerprint };
  }

  async migrate(): Promise<void> {
    await this.sql.begin((tx) => tx.unsafe(this.inbox.migrate()).simple());
  }

  async prune(olderThanMs: number): Promise<number> {
    let deleted = 0;
    for (;;) {
      const result = await this.sql.unsafe(this.inbox.pruneBatch(PRUNE_BATCH), [Math.floor(olderThanMs)]);
      deleted += result.count;
      if (result.count < PRUNE_BATCH) return deleted;
    }
  }
}

type HeldTransaction = Awaited<ReturnType<typeof holdTransaction<TransactionSql>>>;

/** One held `sql.begin`: the handler's guarded `ctx.tx`, then the inbox row and COMMIT, or ROLLBACK. */
class PostgresJsSession implements TransactionSession<TransactionSql> {
  readonly tx: TransactionSql;
  #ended = false;

  constructor(
    private readonly held: HeldTransaction,
    private readonly inbox: InboxSql,
    private readonly key: string,
    private readonly fingerprint: string,
    /** Ends the transaction's backend from another connection (frees its locks at once). */
    private readonly terminate: () => Promise<void>,
  ) {
    this.tx = guard(held.tx, () => this.#ended);
  }

  async commit(record: InboxRecord): Promise<void> {
    if (this.#ended) throw endedError();
    this.#ended = true;
    try {
      await this.held.tx.unsafe(this.inbox.record(this.key, this.fingerprint, record)).simple();
    } catch (error) {
      await this.held.rollback();
      throw error;
    }
    // The callback returns: postgres.js sends COMMIT, and rejects if the server refused it.
    await this.held.commit();
  }

  async rollback(): Promise<void> {
    if (this.#ended) return;
    this.#ended = true;
    const rolledBack = this.held.rollback();
    // postgres.js queues the ROLLBACK behind a statement of the handler still running (a deadline hit
    // mid-statement): if it has not ended quickly, end the backend instead, which frees the key now.
    const quick = await Promise.race([rolledBack.then(() => true), pause(ROLLBACK_GRACE_MS).then(() => false)]);
    if (!quick) {
      await this.terminate();
      await rolledBack;
    }
  }
}

/** How long a rollback may queue behind a running statement before the backend is ended instead. */
const ROLLBACK_GRACE_MS = 200;
/** How long ending a backend waits for it to be gone (its locks freed). */
const TERMINATE_WAIT_MS = 5_000;

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref?.());

async function terminateBackend(sql: Sql, pid: unknown): Promise<void> {
  if (typeof pid !== 'number') return;
  await sql`SELECT pg_terminate_backend(${pid}::int, ${TERMINATE_WAIT_MS}::bigint)`.catch(() => {});
}

/**
 * The transaction as the handler sees it: every postgres.js call works, but nothing once the transaction
 * has ended (postgres.js would otherwise run a late handler's statement on a pooled connection, outside
 * any transaction), and no BEGIN/COMMIT/ROLLBACK through `unsafe` (SAVEPOINTs and `tx.savepoint` are fine).
 */
function guard(tx: TransactionSql, ended: () => boolean): TransactionSql {
  const open = () => {
    if (ended()) throw endedError();
  };
  return new Proxy(tx, {
    apply(target, thisArg, args) {
      open();
      return Reflect.apply(target as never, thisArg, args);
    },
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      if (property === 'unsafe') {
        return (query: string, ...rest: unknown[]) => {
          open();
          if (endsTransaction(query)) throw nestedTransactionError();
          return (value as (...a: unknown[]) => unknown).call(target, query, ...rest);
        };
      }
      if (property === 'savepoint' || property === 'file') {
        return (...args: unknown[]) => {
          open();
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      }
      return value;
    },
  });
}
