import type { AttemptSource } from '../observe/outcome.js';
import type { AttemptContext } from './context.js';
import type { RunningAttempt } from './running-attempts.js';

/**
 * The `ctx` handed to `onPaymentPaid`: `deliveryId`, `timestamp`, `source`, `signal`, `confirmLease` (and
 * `tx` from a transactional store), nothing of the lease behind them, so no handler can come to depend on
 * how a store keeps its lease (the attempt is a private field). A class, not an object literal: `signal` and
 * `confirmLease` are getters that make their object on first use (an AbortController, a bound function),
 * because most handlers use neither and a delivery's allocations are a large part of its cost; V8 builds
 * class getters on its fast path, unlike accessors in an object literal. Destructuring works as usual:
 * `const { signal, confirmLease } = ctx`.
 */
export class HandlerContext implements AttemptContext {
  readonly #attempt: RunningAttempt;
  readonly #confirm: (attempt: RunningAttempt) => Promise<void>;
  #confirmLease: (() => Promise<void>) | undefined;

  constructor(
    readonly deliveryId: string | undefined,
    readonly timestamp: number,
    readonly source: AttemptSource,
    attempt: RunningAttempt,
    confirm: (attempt: RunningAttempt) => Promise<void>,
  ) {
    this.#attempt = attempt;
    this.#confirm = confirm;
  }

  get signal(): AbortSignal {
    return this.#attempt.signal;
  }

  get confirmLease(): () => Promise<void> {
    if (this.#confirmLease === undefined) {
      const attempt = this.#attempt;
      const confirm = this.#confirm;
      this.#confirmLease = () => confirm(attempt);
    }
    return this.#confirmLease;
  }

  outsideTransaction<T>(fn: () => T): T {
    return fn();
  }
}

/** The context with a transactional store: the handler writes through `tx`, the store's transaction. */
export class TransactionContext<Tx> extends HandlerContext {
  constructor(
    deliveryId: string | undefined,
    timestamp: number,
    source: AttemptSource,
    attempt: RunningAttempt,
    confirm: (attempt: RunningAttempt) => Promise<void>,
    readonly tx: Tx,
    scope: { outside<T>(fn: () => T): T } | undefined,
  ) {
    super(deliveryId, timestamp, source, attempt, confirm);
    this.#scope = scope;
  }

  /** The delivery's scope, whose `outside` runs work with its guards off, if the store has guards. */
  readonly #scope: { outside<T>(fn: () => T): T } | undefined;

  override outsideTransaction<T>(fn: () => T): T {
    const scope = this.#scope;
    return scope === undefined ? fn() : scope.outside(fn);
  }
}
