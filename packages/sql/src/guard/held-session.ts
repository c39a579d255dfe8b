import type { HeldTransaction, InboxRecord, TransactionSession } from '@service-pay/core';
import { type DeliveryScope, openDelivery } from '@service-pay/core/node';
import type { Interruption } from '../dialect.js';
import { rollBackInterrupting } from '../rollback-escalation.js';
import type { SqlBinding } from '../sql-store.js';
import { PendingQueries, type TransactionRules } from './pending-queries.js';
import { abortedTransactionError, endedError } from './transaction-errors.js';

/** Everything a held session needs to know about the store that opened it: its binding, and its table checked. */
export interface HeldSessionContext<Tx, Table extends { readonly name: string }>
  extends Pick<SqlBinding<Tx, Table>, 'store' | 'client' | 'dialect' | 'scope'> {
  readonly table: Table;
  /**
   * Sends an interruption of `session` (as the claim named it) from another connection of the client's
   * pool, while `wanted()` (the rollback has not ended); never rejects.
   */
  readonly interrupt: (session: unknown, how: Interruption, wanted: () => boolean) => Promise<void>;
  /** What `ctx.tx` refuses when the client has no guard of its own (`SqlClient.guard`): made once per store. */
  readonly rules: TransactionRules;
  /** The dialect's `abortsTransaction` for this table, made once per store (none: no error ends a transaction). */
  readonly abortsTransaction: ((error: unknown) => boolean) | undefined;
}

/**
 * One delivery inside a client's own transaction, held open until the pipeline decides: the handler's
 * guarded `ctx.tx`, then the inbox row and the client's COMMIT, or its ROLLBACK with the one escalation
 * (`rollBackInterrupting`).
 */
export class HeldSession<Tx, Table extends { readonly name: string }> implements TransactionSession<Tx> {
  readonly tx: Tx;
  #ended = false;
  /**
   * The delivery's scope: what the guards on the app's client refused, the app work they hold, and a
   * `ctx.tx` use after the end (reported through it); ends with the commit or rollback.
   */
  readonly scope: DeliveryScope;
  /** What the handler started through `ctx.tx` and has not finished. */
  readonly #pending: PendingQueries;

  constructor(
    private readonly context: HeldSessionContext<Tx, Table>,
    private readonly held: HeldTransaction<Tx>,
    private readonly key: string,
    private readonly fingerprint: string,
    /** The claim wrote the inbox row (outcome credited, from the same attempt as the commit's record). */
    private readonly written: boolean,
    /** The connection's session as the claim named it, for interrupting it. */
    private readonly session: unknown,
    paymentId?: string,
  ) {
    const { store, client } = context;
    this.scope = openDelivery(context.scope, paymentId);
    this.#pending = new PendingQueries(store, context.abortsTransaction, this.scope);
    // Once the server rolled the transaction back (a deadlock, a disk full), a statement sent through ctx.tx
    // would run outside any transaction and commit on its own: every guard asks `ended` before it sends one,
    // and is refused with the reason (thrown here, where the guards would throw their own "ended" error).
    const ended = () => {
      const aborted = this.#pending.aborted;
      if (aborted !== undefined && !this.#ended) throw abortedTransactionError(store, aborted);
      return this.#ended;
    };
    // The client's own guard, when it has one, is under the follower (which then sees what the handler gets
    // back from every call, the guard refusing first); without one, the follower checks the store's rules
    // itself, in the same proxy (a call crosses one proxy, not two).
    const guarded = client.guard?.(held.tx, ended);
    this.tx =
      guarded === undefined
        ? this.#pending.wrap(held.tx, { ended, rules: context.rules })
        : this.#pending.wrap(guarded);
  }

  commit(record: InboxRecord): Promise<void> {
    // Nothing in flight and nothing held (the usual case): no async frame of ours, no wait; the client's
    // COMMIT is the answer (each frame and await is a promise more per delivery, and with async hooks on,
    // as the delivery guards turn them on, each costs its hooks too).
    if (this.#ended || this.#pending.waiting || this.#pending.failed) return this.#settleThenCommit(record);
    try {
      const unfinished = this.#pending.unawaited();
      const holding = this.scope.settled(); // app work a client guard has yet to judge (DeliveryScope.hold)
      return holding === undefined ? this.#end(record, unfinished) : this.#commitAfter(holding, record, unfinished);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  async #settleThenCommit(record: InboxRecord): Promise<void> {
    if (this.#ended) throw endedError(this.context.store);
    // What the handler started and did not await lands (or fails) first, while the guards still hold: an
    // un-awaited chain may still write beside ctx.tx meanwhile.
    const unfinished = this.#pending.waiting ? await this.#pending.settle() : this.#pending.unawaited();
    const holding = this.scope.settled();
    if (holding !== undefined) await holding;
    if (unfinished === undefined && record.outcome !== 'rejected' && this.#pending.failed) await this.#checkSound();
    return this.#end(record, unfinished);
  }

  /**
   * Before committing after a statement through `ctx.tx` failed: on a database where that aborts the
   * transaction (`SqlDialect.soundCheck`), asks whether it still can commit; if not, the delivery fails.
   * Most clients would report the COMMIT that the server turned into a ROLLBACK as a success.
   */
  async #checkSound(): Promise<void> {
    const { client, dialect, store } = this.context;
    const aborted = this.#pending.aborted;
    if (aborted !== undefined) throw abortedTransactionError(store, aborted);
    if (dialect.soundCheck === undefined || this.#ended || this.scope.refusal !== undefined) return;
    try {
      await client.query(this.held.tx, dialect.soundCheck);
    } catch (error) {
      throw abortedTransactionError(store, error);
    }
  }

  async #commitAfter(holding: Promise<void>, record: InboxRecord, unfinished: Error | undefined): Promise<void> {
    await holding;
    return this.#end(record, unfinished);
  }

  /** Ends the delivery with `record`, or fails it with what the handler left `unfinished` or a guard refused. */
  #end(record: InboxRecord, unfinished: Error | undefined): Promise<void> {
    // Rolled back meanwhile (the commit's deadline).
    if (this.#ended) return Promise.reject(endedError(this.context.store));
    this.#ended = true;
    // The handler's mistake, like a guard's refusal: `scope.refusal` tells the pipeline so.
    if (unfinished !== undefined) void this.scope.refuse(unfinished);
    // A refusal the handler caught, or never awaited, still fails the delivery: nothing is recorded and the
    // sender's retry runs it again.
    const failure = this.scope.end();
    if (failure !== undefined || record.outcome === 'rejected' || !this.written) return this.#endApart(record, failure);
    // The callback returns: the client sends COMMIT, and rejects if the server refused it.
    return this.held.commit();
  }

  /** `#end` when the delivery fails, is rejected, or its row is still to write. */
  async #endApart(record: InboxRecord, failure: Error | undefined): Promise<void> {
    const { client, dialect, table } = this.context;
    if (failure !== undefined) {
      await this.held.rollback().catch(() => {}); // a failed rollback: the client closes the connection
      throw failure;
    }
    if (record.outcome === 'rejected') {
      // The handler's writes go, and the row the claim may have written with them; the rejection is then
      // recorded in a transaction of its own (rare, so the common path carries no savepoint).
      await this.held.rollback();
      await client.queryOutside(dialect.recordApart(table, this.key, this.fingerprint, record));
      return;
    }
    try {
      await client.query(this.held.tx, dialect.record(table, this.key, this.fingerprint, record));
    } catch (error) {
      await this.held.rollback();
      throw error;
    }
    await this.held.commit();
  }

  async rollback(reason?: unknown): Promise<void> {
    // A failure of the handler's that reveals a write beside ctx.tx (SQLite's SQLITE_BUSY from a second
    // connection) becomes the delivery's refusal, reported in place of the driver's own words.
    const explained =
      reason === undefined ? undefined : this.context.dialect.explainHandlerError?.(reason, this.context.store);
    if (explained !== undefined) void this.scope.refuse(explained);
    this.scope.end();
    if (this.#ended) return;
    this.#ended = true;
    await rollBackInterrupting(
      () => this.held.rollback(),
      (how, wanted) => this.context.interrupt(this.session, how, wanted),
    );
  }
}
