import {
  guardTransaction,
  holdTransaction,
  type InboxRecord,
  type TransactionClaim,
  type TransactionSession,
} from '@service-pay/core';
import { inDeliveryOf } from '@service-pay/core/node';
import {
  type Driver,
  endedError,
  endsTransaction,
  explainError,
  IN_PROGRESS_RETRY_MS,
  nestedTransactionError,
  PRUNE_BATCH,
} from '../driver.js';
import type { InboxSql } from '../inbox-sql.js';

/** A result row as the clients hand them back. */
export type Row = Record<string, unknown>;

/**
 * What a store on an ORM or query builder needs of it: its own interactive transaction, and one raw
 * statement at a time, in that transaction or outside. One small adapter per client (kysely.ts,
 * drizzle.ts, knex.ts, typeorm.ts); everything else is shared here.
 */
export interface ClientAdapter<Tx> {
  /** The store's name, for messages (`KyselyStore`). */
  readonly store: string;
  /** Opens the client's own transaction around `work` (`db.transaction().execute(work)`, ...). */
  transaction(work: (tx: Tx) => Promise<void>): PromiseLike<unknown>;
  /** The rows of one statement, run in `tx`. */
  query(tx: Tx, text: string): Promise<Row[]>;
  /** The rows of one statement, run outside any delivery. */
  queryOutside(text: string): Promise<Row[]>;
  /** Names of `tx`'s methods that take SQL text first (checked for BEGIN/COMMIT/ROLLBACK). */
  readonly rawTextMethods: readonly string[];
}

/**
 * The driver of every ORM store: each attempt runs inside the client's own transaction, held open (core's
 * `holdTransaction`) until the pipeline commits or rolls back, so `ctx.tx` is the client's transaction
 * object and the shop's credit, written with its own ORM, commits with the inbox row. Around the handler,
 * one round trip each: the client's BEGIN, the claim (the inbox table's claim function: lock and read),
 * the savepoint; then the inbox INSERT and the client's COMMIT. A duplicate takes BEGIN, claim, ROLLBACK.
 */
export class ClientDriver<Tx> implements Driver<Tx> {
  constructor(
    private readonly client: ClientAdapter<Tx>,
    private readonly inbox: InboxSql,
    /** Names this store in the handler's scope (see refuseOwnTransactions in @service-pay/core). */
    private readonly owner: object,
  ) {}

  async begin(key: string, fingerprint: string): Promise<TransactionClaim<Tx>> {
    const held = await holdTransaction<Tx>((work) => this.client.transaction(work));
    let claim: Row | undefined;
    try {
      claim = (await this.client.query(held.tx, this.inbox.claim(key)))[0];
      if (isFree(claim)) await this.client.query(held.tx, this.inbox.savepoint());
    } catch (error) {
      await held.rollback();
      throw explainError(error, this.inbox.table.name);
    }
    if (isFree(claim)) {
      const interrupt = (how: 'cancel' | 'terminate') => this.signal(claim, how);
      const session = new ClientSession(this.client, held, this.inbox, key, fingerprint, interrupt, this.owner);
      return { state: 'claimed', session };
    }
    const found = claim?.fingerprint;
    // Nothing to do in this transaction; a failed rollback leaves nothing behind either (the server rolls
    // back what a dropped connection held).
    await held.rollback();
    return found === null || found === undefined
      ? { state: 'in-progress', retryAfterMs: IN_PROGRESS_RETRY_MS }
      : { state: 'completed', fingerprint: String(found) };
  }

  async migrate(): Promise<void> {
    const statements = this.inbox.migrateStatements();
    await this.client.transaction(async (tx) => {
      for (const statement of statements) await this.client.query(tx, statement);
    });
  }

  async prune(olderThanMs: number): Promise<number> {
    let deleted = 0;
    for (;;) {
      const rows = await this.client.queryOutside(this.inbox.pruneBatchCounted(PRUNE_BATCH, olderThanMs));
      const count = Number(rows[0]?.deleted ?? 0);
      deleted += count;
      if (count < PRUNE_BATCH) return deleted;
    }
  }

  /**
   * Interrupts what the transaction's backend is running, from another connection, so the client's queued
   * ROLLBACK runs now; `terminate` ends the backend instead (a last resort: a pool whose checked-out
   * client loses its connection may emit an `error` the app does not listen for). Both act only while that
   * backend is still in this transaction (pid and transaction start), never on a connection since reused.
   */
  private async signal(lockRow: Row | undefined, how: 'cancel' | 'terminate'): Promise<void> {
    const pid = Number(lockRow?.pid);
    const started = String(lockRow?.xact_us ?? '');
    if (!Number.isSafeInteger(pid) || !/^\d+$/.test(started)) return;
    const call = how === 'cancel' ? `pg_cancel_backend(${pid})` : `pg_terminate_backend(${pid}, ${TERMINATE_WAIT_MS})`;
    await this.client
      .queryOutside(
        `SELECT ${call} FROM pg_stat_activity WHERE pid = ${pid} AND (extract(epoch FROM xact_start) * 1000000)::bigint = ${started}`,
      )
      .catch(() => undefined);
  }
}

/** The key was taken by this transaction and has no row: the delivery is this one's to run. */
function isFree(claim: Row | undefined): boolean {
  return claim?.locked === true && (claim.fingerprint === null || claim.fingerprint === undefined);
}

/** How long a rollback may queue behind a running statement before the backend is ended instead. */
const ROLLBACK_GRACE_MS = 200;
/** How long a cancelled statement may take to end before its backend is ended instead. */
const CANCEL_GRACE_MS = 1_000;
/** How long ending a backend waits for it to be gone (its locks freed). */
const TERMINATE_WAIT_MS = 5_000;

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref?.());

type Held<Tx> = Awaited<ReturnType<typeof holdTransaction<Tx>>>;

/** One held client transaction: the handler's guarded `ctx.tx`, then the inbox row and COMMIT, or ROLLBACK. */
class ClientSession<Tx> implements TransactionSession<Tx> {
  readonly tx: Tx;
  #ended = false;

  constructor(
    private readonly client: ClientAdapter<Tx>,
    private readonly held: Held<Tx>,
    private readonly inbox: InboxSql,
    private readonly key: string,
    private readonly fingerprint: string,
    private readonly interrupt: (how: 'cancel' | 'terminate') => Promise<void>,
    private readonly owner: object,
  ) {
    this.tx = guardTransaction(held.tx, {
      ended: () => this.#ended,
      rawTextMethods: client.rawTextMethods,
      endsTransaction,
      endedError,
      nestedError: nestedTransactionError,
    });
  }

  run<T>(handler: () => Promise<T>): Promise<T> {
    return inDeliveryOf(this.owner, handler);
  }

  async commit(record: InboxRecord): Promise<void> {
    if (this.#ended) throw endedError();
    this.#ended = true;
    try {
      for (const statement of this.inbox.recordStatements(this.key, this.fingerprint, record)) {
        await this.client.query(this.held.tx, statement);
      }
    } catch (error) {
      await this.held.rollback();
      throw error;
    }
    // The callback returns: the client sends COMMIT, and rejects if the server refused it.
    await this.held.commit();
  }

  async rollback(): Promise<void> {
    if (this.#ended) return;
    this.#ended = true;
    const rolledBack = this.held.rollback().then(() => true);
    // The client queues its ROLLBACK behind a statement of the handler still running (a deadline hit
    // mid-statement): if it has not ended quickly, cancel that statement, and if even that does not end it,
    // end the backend. Either way the key is free at once and nothing the handler sent commits.
    const within = (ms: number) => Promise.race([rolledBack, pause(ms).then(() => false)]);
    if (await within(ROLLBACK_GRACE_MS)) return;
    await this.interrupt('cancel');
    if (await within(CANCEL_GRACE_MS)) return;
    await this.interrupt('terminate');
    await rolledBack;
  }
}
