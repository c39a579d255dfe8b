import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The error for a `ctx.tx` use after its delivery ended (committed, rolled back, past its deadline): the
 * store can no longer count it, so its write is not made. Code `LATE_TX_USE`. It names the payment; the
 * pipeline logs it at error, reports it to `onOutcome` (`outcome: 'late-use'`) and hands it to the
 * store's `flagLateUse`, so the payment's record shows it.
 *
 * @example
 * ```ts
 * if (error instanceof LateTxUseError) console.error(error.paymentId, 'credit it by hand: the write was not made');
 * ```
 */
export class LateTxUseError extends Error {
  /** Stable code for logs, outcomes and tests. */
  readonly code = 'LATE_TX_USE';

  constructor(
    /** The store that ran the delivery (`KnexStore`, `DynamoDbStore`, ...). */
    readonly store: string,
    /** What was used late: `ctx.tx.put(…)`, `ctx.tx.query(…)`. */
    readonly what: string,
    /** The payment of the delivery, when the store was told it. */
    readonly paymentId: string | undefined,
  ) {
    super(
      `${store}: this delivery transaction has ended (committed, rolled back or past its deadline); ` +
        'ctx.tx cannot be used after onPaymentPaid returned or timed out. ' +
        `${what} for payment ${paymentId ?? '(unknown)'} was NOT made. Await every ctx.tx call inside ` +
        'onPaymentPaid (a helper that awaits something first and is not awaited itself runs after the ' +
        'delivery committed); then check this payment and write what is missing.',
    );
    this.name = 'LateTxUseError';
  }
}

/** What a late use is reported to: the pipeline's log, outcome and ledger flag. */
type LateUseListener = (error: LateTxUseError) => void;

/**
 * The store-neutral scope of one delivery, from the handler's start until the store commits or rolls
 * back: every transactional store opens one per delivery (`openDelivery`) and gives it to the pipeline
 * as `session.scope`. Four things live in it:
 * - **refusals**: `refuse(error)` records what a guard refused (a write through the app's own client, a
 *   limit such as `TRANSACTION_TOO_LARGE`) and answers it as a rejected promise marked handled, so a
 *   refusal the handler caught, or never awaited, still fails the delivery at commit (500, nothing
 *   recorded, retried): the store checks `end()` before it commits;
 * - **holds**: `hold(promise)` is app work the store must wait for before committing (`settled()`);
 * - **end**: `end()` when the store commits or rolls back; from then on the app's clients are free again;
 * - **late use**: `lateUse(store, what)` for a `ctx.tx` call after the end, reported to the pipeline
 *   (an error log `LATE_TX_USE` naming the payment, the outcome `late-use`, the store's `flagLateUse`).
 *
 * `run(handler)` runs the handler inside the scope (the guards on the app's clients recognise it);
 * `outside(fn)` is `ctx.outsideTransaction(fn)`: the scope's guards are off inside `fn`.
 *
 * @example
 * ```ts
 * // in the store's begin():
 * const scope = openDelivery(this, { store: 'MyStore', paymentId: draft?.paymentId });
 * // in a guard on the app's client, for a write during the delivery:
 * return scope.refuse(new WriteOutsideTransactionError('MyStore', 'PutItem'));
 * // in ctx.tx, for a call after the end:
 * if (scope.ended) return scope.lateUse('MyStore', 'ctx.tx.put(…)') ?? throwEnded();
 * // in commit():
 * await scope.settled();
 * const refused = scope.end();
 * if (refused !== undefined) { await rollBack(); throw refused; }
 * ```
 */
export class DeliveryScope {
  #ended = false;
  #refusal: Error | undefined;
  /** Made on first `hold`: most deliveries hold nothing, and a Set per delivery was an allocation on each. */
  #holds: Set<Promise<void>> | undefined;
  /** 0: the handler never ran in this scope; 1: it is running; 2: it returned or threw. */
  #handler: 0 | 1 | 2 = 0;
  #onLateUse: LateUseListener | undefined;
  #lateReported = false;

  constructor(
    /** Names the store running this delivery (the `scope` its client's guards were given). */
    readonly store: object,
    /** The delivery's payment, named in a late use's error. */
    readonly paymentId?: string,
  ) {}

  /** Runs the handler inside this delivery: the app's clients recognise it while it lasts. */
  run<T>(handler: () => Promise<T>): Promise<T> {
    this.#handler = 1;
    const running = delivery.run(this, handler);
    const returned = () => {
      this.#handler = 2;
    };
    running.then(returned, returned);
    return running;
  }

  /**
   * For the pipeline: the handler outlived `run`'s promise (its deadline passed, the delivery is rolled
   * back) and runs until `later` settles; a `ctx.tx` call meanwhile is refused to it, not parked.
   */
  runsUntil(later: Promise<unknown>): void {
    this.#handler = 1;
    const returned = () => {
      this.#handler = 2;
    };
    later.then(returned, returned);
  }

  /**
   * Runs `fn` with this scope's guards off: `ctx.outsideTransaction(fn)`, for a write that must survive
   * the delivery (an audit row kept even when the delivery rolls back). A thenable `fn` returns is
   * started inside and answered as a promise of its value.
   */
  outside<T>(fn: () => T): T {
    return outsideDelivery(fn);
  }

  /** Ends the scope (the store commits or rolls back now) and says what it refused meanwhile, if anything. */
  end(): Error | undefined {
    this.#ended = true;
    return this.#refusal;
  }

  /** True once the store committed or rolled back: nothing is refused in its name any more. */
  get ended(): boolean {
    return this.#ended;
  }

  /** The first refusal of this delivery, if any: the pipeline reports it as the delivery's failure. */
  get refusal(): Error | undefined {
    return this.#refusal;
  }

  /**
   * App work started in this delivery that the store must wait for before it commits (a connection
   * checked out for a transaction of the client's own, whose statements a guard has yet to judge): held
   * until `until` settles, so that a refusal found there still fails the delivery.
   */
  hold(until: Promise<unknown>): void {
    if (this.#ended) return;
    const held = until.then(
      () => {},
      () => {},
    );
    this.#holds ??= new Set();
    const holds = this.#holds;
    holds.add(held);
    void held.then(() => holds.delete(held));
  }

  /**
   * What the store awaits before `end`: a promise that resolves once everything held (`hold`) has
   * settled, or undefined when nothing is held (the common case costs no wait).
   */
  settled(): Promise<void> | undefined {
    const holds = this.#holds;
    if (holds === undefined || holds.size === 0) return undefined;
    return (async () => {
      while (holds.size > 0) await Promise.all([...holds]);
    })();
  }

  /**
   * Records `error` as this delivery's refusal (the first one stays) and answers it as a rejected
   * promise, already marked handled: awaited it rejects as usual, left alone it cannot end the process as
   * an unhandled rejection (the store fails the delivery with it at commit). Once the scope has ended
   * the refusal is not recorded: nothing is refused in the delivery's name after its end.
   */
  refuse(error: Error): Promise<never> {
    if (!this.#ended) this.#refusal ??= error;
    const refused = Promise.reject(error);
    refused.catch(() => {});
    return refused;
  }

  /**
   * For the pipeline: `listener` hears of every `ctx.tx` use after this scope ended (`lateUse`).
   */
  onLateUse(listener: LateUseListener): void {
    this.#onLateUse = listener;
  }

  /**
   * For a `ctx.tx` call after the scope ended (`what`: how it was called). Reports the first of the
   * delivery's (the pipeline logs
   * `LATE_TX_USE` naming the payment, emits the outcome `late-use`, and calls the store's `flagLateUse`)
   * and says how to answer the call:
   * - `undefined` while the handler is still running (past its deadline) or never ran in this scope:
   *   refuse the call as the client refuses any call on an ended transaction (a rejection or a throw),
   *   since the handler's own promise carries it to the pipeline;
   * - a parked value once the handler has returned: the call comes from work the handler left behind
   *   (`void creditOrder(ctx.tx)`), whose promise nobody handles. A rejection there would end a plain
   *   Node process as an unhandled rejection, so the value never settles (its builder calls answer it
   *   again): the code after the call, which assumes the write was made, does not run, and the log, the
   *   outcome and the flag are the signal.
   */
  lateUse(store: string, what: string): unknown {
    const listener = this.#onLateUse;
    // The first late call of a delivery is reported: the payment is the news, and a chain of builder calls
    // made late (`tx('credits').insert(…)`) is one write, not several.
    if (listener !== undefined && !this.#lateReported) {
      this.#lateReported = true;
      const error = new LateTxUseError(store, what, this.paymentId);
      try {
        listener(error);
      } catch {
        // The pipeline's listener logs its own failures; a late caller must not get them.
      }
    }
    return this.#handler === 2 ? parkedValue() : undefined;
  }
}

/** The delivery whose handler is running in this async context, if any. */
const delivery = new AsyncLocalStorage<DeliveryScope>();

/**
 * For store authors: opens the scope of one delivery of the store named by `store` (the object the
 * guards on its client were given). `paymentId` (the `draft` given to `begin`) is named in a late use's
 * error. See `DeliveryScope` for what a store does with it.
 *
 * @example
 * ```ts
 * async begin(key, fingerprint, draft) {
 *   const scope = openDelivery(this, draft?.paymentId);
 *   return { state: 'claimed', session: { tx, scope, commit, rollback } };
 * }
 * ```
 */
export function openDelivery(store: object, paymentId?: string): DeliveryScope {
  return new DeliveryScope(store, paymentId);
}

/** The delivery scope whose handler is running in the caller's async context, ended or not. */
export function currentDelivery(): DeliveryScope | undefined {
  return delivery.getStore();
}

/** The context of a store's own work (opening a delivery's transaction): see `asStoreWork`. */
const STORE_WORK = new DeliveryScope({});
STORE_WORK.end();

/** True inside `asStoreWork`. */
export function inStoreWork(): boolean {
  return delivery.getStore() === STORE_WORK;
}

/**
 * For store authors: runs `fn` (the store's own requests: opening a delivery's transaction, its commit)
 * so that no guard on the store's client judges it as the app's.
 *
 * @example
 * ```ts
 * const held = await holdTransaction((work) => asStoreWork(() => client.transaction(work)));
 * ```
 */
export function asStoreWork<T>(fn: () => T): T {
  return delivery.run(STORE_WORK, fn);
}

function outsideDelivery<T>(fn: () => T): T {
  return delivery.exit(() => {
    const result = fn();
    const then = (result as { then?: unknown } | null)?.then;
    if (typeof then !== 'function' || result instanceof Promise) return result;
    // A lazy client's query (Drizzle, Knex, Prisma, postgres.js) runs when its `then` is called: call it
    // here, inside, or the write would be sent from the awaiting code, in the delivery.
    return new Promise((resolve, reject) => {
      (then as (a: unknown, b: unknown) => unknown).call(result, resolve, reject);
    }) as T;
  });
}

/**
 * For store authors: what a refused call answers in place of the client's own value: a promise that
 * rejects with the refusal, and that also takes any builder call chained onto it
 * (`db.transaction().execute(...)`, `knex.transactionProvider()()`), answering the same rejection, so
 * nothing throws synchronously into the merchant's code.
 *
 * @example
 * ```ts
 * return refusedValue(scope.refuse(new OwnTransactionError('KnexStore', 'knex.transaction()')));
 * ```
 */
export function refusedValue(refused: Promise<never>): never {
  const stub: object = new Proxy(() => {}, {
    get(_target, property) {
      if (property === 'then' || property === 'catch' || property === 'finally') {
        const method = refused[property] as (...args: unknown[]) => unknown;
        return method.bind(refused);
      }
      if (property === Symbol.toStringTag) return 'Promise';
      return () => stub;
    },
    apply: () => stub,
  });
  return stub as never;
}

/** A value that never settles, and takes any builder call chained onto it (see `DeliveryScope.lateUse`). */
function parkedValue(): unknown {
  return refusedValue(new Promise<never>(() => {}));
}
