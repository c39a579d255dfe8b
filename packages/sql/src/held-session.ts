import { guardTransaction, type HeldTransaction, type InboxRecord, type TransactionSession } from '@service-pay/core';
import { type DeliveryGuard, openDelivery, outsideDelivery } from '@service-pay/core/node';
import type { Interruption } from './dialect.js';
import { PendingQueries } from './pending-queries.js';
import { rollBackInterrupting } from './rollback-escalation.js';
import type { SqlBinding } from './sql-store.js';
import { endedError, nestedTransactionError } from './transaction-errors.js';

/** Everything a held session needs to know about the store that opened it: its binding, and its table checked. */
export interface HeldSessionContext<Tx, Table extends { readonly name: string }>
  extends Pick<SqlBinding<Tx, Table>, 'store' | 'client' | 'dialect' | 'scope'> {
  readonly table: Table;
  /** Sends an interruption of `session` (as the claim named it) from another connection of the client's pool. */
  readonly interrupt: (session: unknown, how: Interruption) => Promise<void>;
}

/**
 * One delivery inside a client's own transaction, held open until the pipeline decides: the handler's
 * guarded `ctx.tx`, then the inbox row and the client's COMMIT, or its ROLLBACK with the one escalation
 * (`rollBackInterrupting`).
 */
export class HeldSession<Tx, Table extends { readonly name: string }> implements TransactionSession<Tx> {
  readonly tx: Tx;
  #ended = false;
  /** What the guards on the app's client refused during this delivery; ends with the commit or rollback. */
  readonly #delivery: DeliveryGuard;
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
  ) {
    const { store, client, dialect } = context;
    const ended = () => this.#ended;
    this.#delivery = openDelivery(context.scope);
    this.#pending = new PendingQueries(store);
    // Outermost, so it sees what the handler gets back from every call (the guards below refuse first).
    this.tx = this.#pending.wrap(
      client.guard?.(held.tx, ended) ??
        guardTransaction(held.tx, {
          ended,
          rawTextMethods: client.rawTextMethods,
          endsTransaction: (text) => dialect.endsTransaction(text),
          endedError: () => endedError(store),
          nestedError: () => nestedTransactionError(store),
        }),
    );
  }

  run<T>(handler: () => Promise<T>): Promise<T> {
    return this.#delivery.run(handler);
  }

  outside<T>(fn: () => T): T {
    return outsideDelivery(fn);
  }

  refusal(): unknown {
    return this.#delivery.refusal;
  }

  async commit(record: InboxRecord): Promise<void> {
    const { client, dialect, table, store } = this.context;
    if (this.#ended) throw endedError(store);
    // What the handler started and did not await lands (or fails) first, while the guards still hold: an
    // un-awaited chain may still write beside ctx.tx meanwhile.
    // Nothing in flight (the usual case): no wait, so no promise of its own.
    const unfinished = this.#pending.waiting ? await this.#pending.settle() : this.#pending.unawaited();
    const holding = this.#delivery.settled(); // app work a client guard has yet to judge (DeliveryGuard.hold)
    if (holding !== undefined) await holding;
    if (this.#ended) throw endedError(store); // rolled back meanwhile (the commit's deadline)
    this.#ended = true;
    // The handler's mistake, like a guard's refusal: `refusal()` tells the pipeline so.
    if (unfinished !== undefined) void this.#delivery.refuse(unfinished);
    // A refusal the handler caught, or never awaited, still fails the delivery: nothing is recorded and the
    // sender's retry runs it again.
    const failure = this.#delivery.end();
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
    if (!this.written) {
      try {
        await client.query(this.held.tx, dialect.record(table, this.key, this.fingerprint, record));
      } catch (error) {
        await this.held.rollback();
        throw error;
      }
    }
    // The callback returns: the client sends COMMIT, and rejects if the server refused it.
    await this.held.commit();
  }

  async rollback(): Promise<void> {
    this.#delivery.end();
    if (this.#ended) return;
    this.#ended = true;
    await rollBackInterrupting(
      () => this.held.rollback(),
      (how) => this.context.interrupt(this.session, how),
    );
  }
}
