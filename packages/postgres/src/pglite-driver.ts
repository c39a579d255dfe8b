import type { PGliteInterface, Results, Transaction } from '@electric-sql/pglite';
import type { InboxRecord, TransactionClaim, TransactionSession } from '@service-pay/core';
import type { InboxSql } from '@service-pay/sql/postgres';
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
 * Per PGlite instance, shared by every store on it: whether one of our delivery transactions is open.
 * PGlite is one connection, so it runs one transaction at a time; everything else queues behind it.
 */
const busy = new WeakSet<object>();

/**
 * PGlite: the key is held in this process. A PGlite database belongs to one process and has one
 * connection, so a delivery transaction that is open holds the only connection there is: any other `begin`
 * answers `in-progress` at once instead of queueing behind it (it may run for up to the handler's
 * deadline), and the sender retries. That is the one difference from PostgreSQL: on PGlite, deliveries of
 * different payments do not run side by side either.
 */
export class PGliteDriver implements Driver<Transaction> {
  constructor(
    private readonly db: PGliteInterface,
    private readonly sql: InboxSql,
  ) {}

  async begin(key: string, fingerprint: string): Promise<TransactionClaim<Transaction>> {
    const beginSql = this.sql.beginWithoutLock(key);
    if (busy.has(this.db)) return { state: 'in-progress', retryAfterMs: IN_PROGRESS_RETRY_MS };
    busy.add(this.db);
    return new Promise((resolve, reject) => {
      let session: PGliteSession | undefined;
      let recorded: string | undefined;
      this.db
        .transaction(async (raw) => {
          const found = (await raw.exec(beginSql))[0]?.rows[0] as { fingerprint: string } | undefined;
          // Seen before: this empty transaction just commits, and the answer goes out once it has.
          if (found !== undefined) {
            recorded = found.fingerprint;
            return;
          }
          session = new PGliteSession(raw, this.sql, key, fingerprint);
          resolve({ state: 'claimed', session });
          // Held open until the pipeline commits or rolls back; a rejection here makes PGlite roll back.
          await session.decided;
        })
        .then(
          () => {
            busy.delete(this.db);
            if (recorded !== undefined) resolve({ state: 'completed', fingerprint: recorded });
            session?.settle(undefined);
          },
          (error: unknown) => {
            busy.delete(this.db);
            if (session === undefined) reject(explainError(error, this.sql.table.name));
            else session.settle(error);
          },
        );
    });
  }

  async migrate(): Promise<void> {
    await this.db.transaction(async (tx) => {
      await tx.exec(this.sql.migrate());
    });
  }

  async prune(olderThanMs: number): Promise<number> {
    let deleted = 0;
    for (;;) {
      const { affectedRows = 0 } = await this.db.query(this.sql.pruneBatch(PRUNE_BATCH), [Math.floor(olderThanMs)]);
      deleted += affectedRows;
      if (affectedRows < PRUNE_BATCH) return deleted;
    }
  }
}

type State = 'open' | 'committing' | 'ended';

/** The open PGlite transaction of one delivery, held inside `PGlite.transaction`'s callback. */
class PGliteSession implements TransactionSession<Transaction> {
  readonly tx: Transaction;
  /** Resolves (commit) or rejects (rollback) the transaction callback. */
  readonly decided: Promise<void>;
  #decide!: { commit: () => void; rollback: (reason: unknown) => void };
  #state: State = 'open';
  readonly #settled: Promise<unknown>;
  #settle!: (error: unknown) => void;

  constructor(
    private readonly raw: Transaction,
    private readonly sql: InboxSql,
    private readonly key: string,
    private readonly fingerprint: string,
  ) {
    this.decided = new Promise<void>((commit, rollback) => {
      this.#decide = { commit, rollback };
    });
    this.#settled = new Promise((settle) => {
      this.#settle = settle;
    });
    this.tx = this.#guard(raw);
  }

  /** Called once PGlite has ended the transaction: `undefined` if it committed, else why it did not. */
  settle(error: unknown): void {
    this.#settle(error);
  }

  async commit(record: InboxRecord): Promise<void> {
    if (this.#state !== 'open') throw endedError();
    this.#state = 'committing';
    try {
      await this.raw.exec(this.sql.record(this.key, this.fingerprint, record));
    } catch (error) {
      this.#state = 'ended';
      this.#decide.rollback(error);
      await this.#settled;
      throw error;
    }
    this.#state = 'ended';
    this.#decide.commit();
    // PGlite sends COMMIT and throws if it answered ROLLBACK (the transaction had failed).
    const error = await this.#settled;
    if (error !== undefined) throw error;
  }

  async rollback(reason: unknown): Promise<void> {
    if (this.#state !== 'open') {
      await this.#settled;
      return;
    }
    this.#state = 'ended';
    // PGlite runs its ROLLBACK after any statement of the handler already queued; new ones are refused.
    this.#decide.rollback(reason ?? new Error('PostgresStore: rolled back'));
    await this.#settled;
  }

  /** PGlite's transaction as the handler sees it: refused once ended, and not the handler's to end or restart. */
  #guard(raw: Transaction): Transaction {
    const isOpen = () => this.#state === 'open';
    const open = (text?: string) => {
      if (!isOpen()) throw endedError();
      if (endsTransaction(text)) throw nestedTransactionError();
    };
    return {
      query: async <T>(query: string, params?: unknown[], options?: Parameters<Transaction['query']>[2]) => {
        open(query);
        return (await raw.query<T>(query, params, options)) as Results<T>;
      },
      sql: async <T>(strings: TemplateStringsArray, ...params: unknown[]) => {
        open(strings[0]);
        return (await raw.sql<T>(strings, ...params)) as Results<T>;
      },
      exec: async (query, options) => {
        open(query);
        return await raw.exec(query, options);
      },
      rollback: async () => {
        throw new Error('PostgresStore: throw from onPaymentPaid to roll back; ctx.tx.rollback() is the store’s.');
      },
      listen: async (channel, callback) => {
        open();
        return await raw.listen(channel, callback);
      },
      get closed() {
        return !isOpen();
      },
    };
  }
}
