import type { InboxRecord, TransactionClaim, TransactionSession } from '@service-pay/core';
import type { InboxSql } from '@service-pay/sql/postgres';
import type { Pool, PoolClient, QueryResult } from 'pg';
import {
  type Driver,
  endedError,
  endsTransaction,
  explainError,
  IN_PROGRESS_RETRY_MS,
  nestedTransactionError,
  PRUNE_BATCH,
} from './driver.js';

/** How long a rollback waits for a killed backend to be gone (its locks freed). */
const TERMINATE_WAIT_MS = 5_000;

/**
 * node-postgres: one pool client per attempt, checked out by `begin` and given back exactly once, by the
 * commit, the rollback, or `begin` itself when the key is taken or done.
 */
export class PgDriver implements Driver<PoolClient> {
  constructor(
    private readonly pool: Pool,
    private readonly sql: InboxSql,
  ) {}

  async begin(key: string, fingerprint: string): Promise<TransactionClaim<PoolClient>> {
    const beginSql = this.sql.begin(key);
    const lease = new CheckedOut(await this.pool.connect());
    let results: QueryResult[];
    try {
      results = (await lease.client.query(beginSql)) as unknown as QueryResult[];
    } catch (error) {
      lease.release(error);
      throw explainError(error, this.sql.table.name);
    }
    const locked = results[1]?.rows[0]?.locked === true;
    const found = results[2]?.rows[0] as { fingerprint: string } | undefined;
    if (found === undefined && locked) {
      return { state: 'claimed', session: new PgSession(this.pool, lease, this.sql, key, fingerprint) };
    }
    // Nothing to do in this transaction. Even if ROLLBACK fails the answer stands: the connection is then
    // dropped, and the server rolls back by itself.
    try {
      await lease.client.query('ROLLBACK');
      lease.release();
    } catch (error) {
      lease.release(error);
    }
    return found === undefined
      ? { state: 'in-progress', retryAfterMs: IN_PROGRESS_RETRY_MS }
      : { state: 'completed', fingerprint: found.fingerprint };
  }

  async migrate(): Promise<void> {
    // One simple-protocol message: pool.query drops the connection if any statement fails, so an aborted
    // BEGIN never goes back to the pool.
    await this.pool.query(`BEGIN;\n${this.sql.migrate()};\nCOMMIT`);
  }

  async prune(olderThanMs: number): Promise<number> {
    let deleted = 0;
    for (;;) {
      const { rowCount } = await this.pool.query(this.sql.pruneBatch(PRUNE_BATCH), [Math.floor(olderThanMs)]);
      deleted += rowCount ?? 0;
      if ((rowCount ?? 0) < PRUNE_BATCH) return deleted;
    }
  }
}

/** A checked-out pool client, given back once; `error` events while out are kept from crashing the app. */
class CheckedOut {
  #released = false;
  // A connection that drops while checked out emits 'error'; with no listener Node would throw it. The
  // query in flight (or the next one) fails by itself, and that is where the session learns of it.
  readonly #onError = () => {};

  constructor(readonly client: PoolClient) {
    client.on('error', this.#onError);
  }

  /** Back to the pool, or (with an error) closed and dropped from it. */
  release(error?: unknown): void {
    if (this.#released) return;
    this.#released = true;
    // Kept on a dropped client: closing it may still emit 'error'. A healthy one gets the pool's listener.
    if (error === undefined) this.client.off('error', this.#onError);
    this.client.release(error === undefined ? undefined : error instanceof Error ? error : new Error(String(error)));
  }
}

type State = 'open' | 'committing' | 'ended';

/** One open transaction on one pool client: the handler's `ctx.tx`, then commit or rollback. */
class PgSession implements TransactionSession<PoolClient> {
  readonly tx: PoolClient;
  #state: State = 'open';
  /** Queries the handler sent through `tx` that have not answered yet. */
  #inFlight = 0;
  /** The handler sent something we cannot follow (a Submittable such as a cursor): treat it as running. */
  #untracked = false;

  constructor(
    private readonly pool: Pool,
    private readonly lease: CheckedOut,
    private readonly sql: InboxSql,
    private readonly key: string,
    private readonly fingerprint: string,
  ) {
    this.tx = this.#guard(lease.client);
  }

  async commit(record: InboxRecord): Promise<void> {
    if (this.#state !== 'open') throw endedError();
    this.#state = 'committing';
    let results: QueryResult[];
    try {
      results = (await this.lease.client.query(
        `${this.sql.record(this.key, this.fingerprint, record)};\nCOMMIT`,
      )) as unknown as QueryResult[];
    } catch (error) {
      if (this.#state === 'committing') await this.#end(error, isServerError(error));
      throw error;
    }
    if (this.#state !== 'committing') return; // a rollback gave up on us meanwhile; the pipeline answers 500
    this.#state = 'ended';
    this.lease.release();
    // A transaction that had failed (the handler caught a statement's error and returned) answers its COMMIT
    // with ROLLBACK rather than an error; the INSERT before it fails first, this is the second guard.
    if (results[results.length - 1]?.command !== 'COMMIT') {
      throw new Error('PostgresStore: COMMIT rolled back a failed transaction; nothing was recorded.');
    }
  }

  async rollback(reason: unknown): Promise<void> {
    if (this.#state === 'ended') return;
    // Busy: a statement of the handler (or our COMMIT) is on the wire. ROLLBACK would wait behind it, so
    // the connection is closed instead and its backend ended, which frees the key now.
    const idle = this.#state === 'open' && this.#inFlight === 0 && !this.#untracked;
    await this.#end(reason, idle);
  }

  async #end(reason: unknown, rollbackFirst: boolean): Promise<void> {
    this.#state = 'ended';
    if (rollbackFirst) {
      try {
        await this.lease.client.query('ROLLBACK');
        this.lease.release();
        return;
      } catch (error) {
        reason = error;
      }
    }
    const pid = (this.lease.client as { processID?: unknown }).processID;
    this.lease.release(reason ?? new Error('PostgresStore: transaction ended'));
    await terminateBackend(this.pool, pid);
  }

  /**
   * The client as the handler sees it: every pg method works, but `query` is refused once the transaction
   * has ended (so a late handler can never write into a connection that went back to the pool), and so are
   * BEGIN/COMMIT/ROLLBACK through it and `release` (the store ends the transaction and gives it back).
   */
  #guard(client: PoolClient): PoolClient {
    const query = (...args: unknown[]): unknown => {
      const last = args[args.length - 1];
      const callback = typeof last === 'function' ? (last as (...r: unknown[]) => void) : undefined;
      const submittable = typeof (args[0] as { submit?: unknown } | null)?.submit === 'function';
      const first = args[0] as { text?: unknown } | string | null;
      const refused =
        this.#state !== 'open'
          ? endedError()
          : endsTransaction(typeof first === 'string' ? first : first?.text)
            ? nestedTransactionError()
            : undefined;
      if (refused !== undefined) {
        const error = refused;
        if (callback !== undefined) return void queueMicrotask(() => callback(error));
        if (submittable) throw error;
        return Promise.reject(error);
      }
      if (submittable) {
        this.#untracked = true;
        return (client.query as (...a: unknown[]) => unknown)(...args);
      }
      this.#inFlight++;
      const done = () => {
        this.#inFlight--;
      };
      if (callback !== undefined) {
        args[args.length - 1] = (...result: unknown[]) => {
          done();
          callback(...result);
        };
        return (client.query as (...a: unknown[]) => unknown)(...args);
      }
      const pending = (client.query as (...a: unknown[]) => Promise<unknown>)(...args);
      pending.then(done, done);
      return pending;
    };
    const release = () => {
      throw new Error('PostgresStore: do not release ctx.tx; the store ends the transaction and gives it back.');
    };
    return new Proxy(client, {
      get(target, property, receiver) {
        if (property === 'query') return query;
        if (property === 'release') return release;
        return Reflect.get(target, property, receiver);
      },
    });
  }
}

/** An error the server sent (it has a SQLSTATE): the connection itself is still fine. */
function isServerError(error: unknown): boolean {
  return typeof (error as { code?: unknown } | null)?.code === 'string' && 'severity' in (error as object);
}

/**
 * Ends a backend whose connection we closed while it was busy: a closed socket alone is noticed only when
 * the running statement ends, and until then its transaction would keep the key. Waits (PostgreSQL 14+)
 * until the backend is gone, so the key is free when the rollback resolves. Best effort: a server that is
 * down has rolled back already.
 */
async function terminateBackend(pool: Pool, pid: unknown): Promise<void> {
  if (typeof pid !== 'number') return;
  try {
    await pool.query('SELECT pg_terminate_backend($1::int, $2::bigint)', [pid, TERMINATE_WAIT_MS]);
  } catch (error) {
    // 42883: no such function, a server before 14 without the waiting form.
    if ((error as { code?: unknown }).code === '42883') {
      await pool.query('SELECT pg_terminate_backend($1::int)', [pid]).catch(() => {});
    }
  }
}
