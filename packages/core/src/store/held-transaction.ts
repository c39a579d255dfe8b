/**
 * A callback-style transaction held open: the client's `transaction(async (tx) => ...)` has started and
 * handed over `tx`, and its callback waits until `commit` or `rollback` says how to end.
 *
 * @example
 * ```ts
 * const held = await holdTransaction((work) => db.transaction(work));
 * await held.tx.insert(credits).values({ orderNo: 'o_1' });
 * await held.commit(); // the callback returns: the client commits
 * ```
 */
export interface HeldTransaction<Tx> {
  /** The transaction object the client passed to its callback. */
  readonly tx: Tx;
  /**
   * Lets the callback return, so the client commits. Resolves once the client's `transaction()` has
   * resolved; rejects with its error when the commit failed (or the client had already ended the
   * transaction, e.g. on its own timeout).
   */
  commit(): Promise<void>;
  /**
   * Makes the callback throw, so the client rolls back. Resolves once the client's `transaction()` has
   * settled; never rejects: a rollback that fails leaves nothing committed either (the server rolls back a
   * transaction whose connection is gone). Returns the client's error if it reported one, for logging.
   */
  rollback(): Promise<unknown>;
}

/** Thrown inside the held callback to make the client roll back; never escapes `holdTransaction`. */
class RollbackRequested extends Error {
  constructor() {
    super('service-pay: rollback requested by the delivery pipeline');
    this.name = 'RollbackRequested';
  }
}

/**
 * What every held callback throws to roll back: one error for all, made once without its stack. Nobody
 * reads it (it never leaves `holdTransaction`, which only compares it by identity), and making one per
 * rollback was the largest single cost of a duplicate's client-side work (every duplicate rolls back).
 */
const ROLLBACK_REQUESTED: RollbackRequested = (() => {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return new RollbackRequested();
  } finally {
    Error.stackTraceLimit = limit;
  }
})();

/**
 * Opens a callback-style transaction (Prisma `$transaction`, Drizzle, Kysely, Knex, TypeORM, postgres.js
 * `begin`, ...) and keeps it open until the pipeline decides: the seam for transactional stores on clients
 * whose transactions end when their callback returns. Resolves with the held transaction once the callback
 * has been called; rejects with the client's error if the transaction could not start.
 *
 * A client that calls the callback a second time (a retry on a serialization failure) gets an error from
 * the second call: the first attempt's `tx` is what the handler used.
 *
 * @example
 * ```ts
 * import { holdTransaction } from '@service-pay/core';
 *
 * const held = await holdTransaction((work) => knex.transaction(work));
 * try {
 *   await held.tx('credits').insert({ order_no: 'o_1' });
 *   await held.commit();
 * } catch (error) {
 *   await held.rollback();
 *   throw error;
 * }
 * ```
 */
export function holdTransaction<Tx>(
  open: (work: (tx: Tx) => Promise<void>) => PromiseLike<unknown>,
): Promise<HeldTransaction<Tx>> {
  return new Promise((resolveHeld, rejectHeld) => {
    // The callback's own promise is the decision: it resolves on commit and rejects on rollback, so the
    // client's wait is on it directly (no async frame or await of ours: each is a promise more per
    // delivery, and with async hooks on, as the delivery guards turn them on, each costs its hooks too).
    let decide: (commit: boolean) => void = () => {};
    const decision = new Promise<void>((resolve, reject) => {
      decide = (commit) => (commit ? resolve() : reject(ROLLBACK_REQUESTED));
    });
    let started = false;

    const work = (tx: Tx): Promise<void> => {
      if (started) {
        return Promise.reject(
          new Error('service-pay: the transaction callback ran twice; the first attempt already holds the key.'),
        );
      }
      started = true;
      resolveHeld({ tx, commit, rollback });
      return decision;
    };

    let outcome: Promise<unknown>;
    try {
      outcome = Promise.resolve(open(work));
    } catch (error) {
      outcome = Promise.reject(error);
    }
    // Settles the held promise if the transaction never reached the callback; after that, the outcome is
    // read by commit or rollback (this handler keeps a rejection from being reported as unhandled).
    outcome.then(
      () => {
        if (!started) rejectHeld(new Error('service-pay: the transaction resolved without calling its callback.'));
      },
      (error: unknown) => {
        if (!started) rejectHeld(error);
      },
    );

    // The client's own promise, not an async wrapper around it: one promise fewer on every delivery (its
    // value, what the callback returned, is nothing).
    function commit(): Promise<void> {
      decide(true);
      return outcome as Promise<void>;
    }

    function rollback(): Promise<unknown> {
      decide(false);
      return outcome.then(
        () => undefined,
        (error: unknown) => (error === ROLLBACK_REQUESTED ? undefined : error),
      );
    }
  });
}
