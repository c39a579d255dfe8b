import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * One delivery as the guards on the app's clients see it (opened with `openDelivery`), from the moment its
 * handler starts until its store commits or rolls back: which store runs it, whether it has ended, and the
 * first thing a guard refused during it. A guard never throws into the merchant's code: it answers a rejected promise and
 * records the refusal here, so a refused call that was never awaited (or whose error was caught) still
 * fails the delivery when the store commits.
 *
 * @example
 * ```ts
 * const delivery = openDelivery(scope);
 * await delivery.run(handler);
 * const refused = delivery.end(); // at commit: roll back and fail the delivery with it
 * ```
 */
export class DeliveryGuard {
  #ended = false;
  #refusal: Error | undefined;
  /** Made on first `hold`: most deliveries hold nothing, and a Set per delivery was an allocation on each. */
  #holds: Set<Promise<void>> | undefined;

  constructor(
    /** Names the store running this delivery (the `scope` its client's guards were given). */
    readonly scope: object,
  ) {}

  /** Runs the handler inside this delivery: the app's clients recognise it while it lasts. */
  run<T>(handler: () => Promise<T>): Promise<T> {
    return running.run(this, handler);
  }

  /** Ends the guard (the store commits or rolls back now) and says what it refused meanwhile, if anything. */
  end(): Error | undefined {
    this.#ended = true;
    return this.#refusal;
  }

  /** True once the store committed or rolled back: nothing is refused in its name any more. */
  get ended(): boolean {
    return this.#ended;
  }

  /** The first refusal of this delivery, if any. */
  get refusal(): Error | undefined {
    return this.#refusal;
  }

  /**
   * For a client guard: app work started in this delivery whose statements the guard has not judged yet
   * (a connection checked out for a transaction of the client's own, which Prisma opens for one `create`
   * on MySQL), held until `until` settles, so that a write found there still fails the delivery rather
   * than arriving after its commit.
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
   * What the store awaits before `end`: a promise that resolves once everything held in this delivery
   * (`hold`) has settled, or undefined when nothing is held (the common case costs no wait).
   */
  settled(): Promise<void> | undefined {
    const holds = this.#holds;
    if (holds === undefined || holds.size === 0) return undefined;
    return (async () => {
      while (holds.size > 0) await Promise.all([...holds]);
    })();
  }

  /**
   * Records `error` as this delivery's refusal and answers it as a rejected promise, already marked
   * handled: awaited it rejects as usual, left alone it cannot end the process as an unhandled rejection
   * (the store fails the delivery with it at commit).
   */
  refuse(error: Error): Promise<never> {
    this.#refusal ??= error;
    const refused = Promise.reject(error);
    refused.catch(() => {});
    return refused;
  }
}

/** The delivery whose handler is running in this async context, if any. */
const running = new AsyncLocalStorage<DeliveryGuard>();

/**
 * For store authors, the one way to open a delivery: a delivery of the store named by `scope`, whose `run`
 * makes the handler recognisable to the guards on the store's client (`refuseOwnTransactions`,
 * `clientGuard`). The store awaits `settled()` and then ends it (`end()`) when it commits or rolls back,
 * and fails the delivery with what it refused meanwhile.
 *
 * @example
 * ```ts
 * const delivery = openDelivery(scope);
 * await delivery.run(handler);
 * await delivery.settled(); // at commit: app work a guard has yet to judge
 * const refused = delivery.end(); // then, if anything was refused, roll back and fail the delivery with it
 * ```
 */
export function openDelivery(scope: object): DeliveryGuard {
  return new DeliveryGuard(scope);
}

/** The context of a store's own work (opening a delivery's transaction): see `asStoreWork`. */
const STORE_WORK = new DeliveryGuard({});
STORE_WORK.end();

/**
 * For store authors: runs `fn` (the store opening a delivery's transaction) so that a client guard can
 * tell the connection it checks out is the store's own (`ClientGuard.storeWork()`): its statements are
 * `ctx.tx`'s, never judged as the app's.
 *
 * @example
 * ```ts
 * const held = await holdTransaction((work) => asStoreWork(() => client.transaction(work)));
 * ```
 */
export function asStoreWork<T>(fn: () => T): T {
  return running.run(STORE_WORK, fn);
}

/**
 * Runs `fn` with no delivery guard: what `ctx.outsideTransaction(fn)` does on a transactional store, for a
 * write that must survive the delivery (an audit row kept even when the delivery rolls back). A thenable
 * `fn` returns is started inside and answered as a promise of its value.
 *
 * @example
 * ```ts
 * const session = { ..., outside: (fn) => outsideDelivery(fn) };
 * ```
 */
export function outsideDelivery<T>(fn: () => T): T {
  return running.exit(() => {
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
 * The error the handler gets for opening the client's own transaction while a delivery's transaction is
 * open: that second transaction would commit its credit whatever happens to the delivery (a throw, a
 * deadline, a failed commit), and the sender's retry would credit again. Code `OWN_TRANSACTION_IN_HANDLER`.
 *
 * @example
 * ```ts
 * if (error instanceof OwnTransactionError) console.error('write the credit through ctx.tx');
 * ```
 */
export class OwnTransactionError extends Error {
  /** Stable code for logs and tests. */
  readonly code = 'OWN_TRANSACTION_IN_HANDLER';

  constructor(store: string, call: string) {
    super(
      `${store}: onPaymentPaid called ${call} while the delivery's transaction is open. Write the credit ` +
        "through ctx.tx instead: it is this client's transaction, and commits with the dedupe record. A " +
        'transaction of your own commits even when the delivery fails, and the retry credits again. (Work ' +
        'that truly must commit apart from the delivery: ctx.outsideTransaction(() => ...).)',
    );
    this.name = 'OwnTransactionError';
  }
}

/**
 * The error the handler gets for a write sent through the app's own client (the one given to the store)
 * beside `ctx.tx` while the delivery's transaction is open: it would commit on its own, stay when the
 * delivery fails, and the sender's retry would credit again. Reads are allowed. Code
 * `WRITE_OUTSIDE_TRANSACTION` (500, the delivery unrecorded).
 *
 * @example
 * ```ts
 * if (error instanceof WriteOutsideTransactionError) console.error('write it through ctx.tx');
 * ```
 */
export class WriteOutsideTransactionError extends Error {
  /** Stable code for logs and tests. */
  readonly code = 'WRITE_OUTSIDE_TRANSACTION';

  constructor(store: string, what: string) {
    super(
      `${store}: onPaymentPaid wrote through the app's own client (${what}) while the delivery's transaction ` +
        'is open. Write it through ctx.tx instead: it commits with the dedupe record, or not at all. A write ' +
        'sent on its own stays even when the delivery fails, and the retry credits again; the delivery is ' +
        'answered 500 and nothing is recorded. Reads are allowed. (A write that must survive a failed ' +
        'delivery: ctx.outsideTransaction(() => ...).)',
    );
    this.name = 'WriteOutsideTransactionError';
  }
}

/**
 * For store authors: what one of the app's clients (a pool, an ORM instance) knows about the stores it was
 * given to. `running()` names the delivery of one of them running in the caller's async context, while it
 * lasts (not ended, not inside `ctx.outsideTransaction`).
 *
 * @example
 * ```ts
 * const guard = clientGuard(pool, scope, 'KyselyStore');
 * const delivery = guard.running();
 * if (delivery !== undefined) return delivery.refuse(new WriteOutsideTransactionError(delivery.store, 'pool.query'));
 * ```
 */
export class ClientGuard {
  readonly #stores = new WeakMap<object, string>();

  /** Adds a store (its scope, with its name) that was given this client. */
  add(scope: object, store: string): void {
    this.#stores.set(scope, store);
  }

  /** The delivery of one of this client's stores running in the caller's async context, with its store. */
  running(): { delivery: DeliveryGuard; store: string } | undefined {
    const delivery = running.getStore();
    if (delivery === undefined || delivery.ended) return undefined;
    const store = this.#stores.get(delivery.scope);
    return store === undefined ? undefined : { delivery, store };
  }

  /** True inside `asStoreWork`: the store itself is checking out a connection for a delivery. */
  storeWork(): boolean {
    return running.getStore() === STORE_WORK;
  }
}

const guards = new WeakMap<object, ClientGuard>();

/**
 * For store authors: the guard of `client` (one per client instance, shared by every store given it), with
 * the store named by `scope` added to it.
 *
 * @example
 * ```ts
 * const guard = clientGuard(pool, scope, 'KyselyStore');
 * ```
 */
export function clientGuard(client: object, scope: object, store: string): ClientGuard {
  let guard = guards.get(client);
  if (guard === undefined) {
    guard = new ClientGuard();
    guards.set(client, guard);
  }
  guard.add(scope, store);
  return guard;
}

/**
 * What a refused call answers in place of the client's own value: a promise that rejects with the
 * refusal, and that also takes any builder call chained onto it (`db.transaction().execute(...)`,
 * `knex.transactionProvider()()`), answering the same rejection, so nothing throws synchronously into the
 * merchant's code.
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

/** The methods already wrapped, per object: each is wrapped once, however many stores were given it. */
const wrappedMethods = new WeakMap<object, Set<string>>();

/**
 * For store authors: wraps `method` of `client` (once per object, an own property, nothing of the
 * library's internals) with `wrapper`, which gets the original bound to its `this` and the call's
 * arguments. An object derived from a guarded client (a reserved connection, a `withSchema` executor) is
 * wrapped the same way, judged by its parent's guard.
 *
 * @example
 * ```ts
 * wrapMethod(pool, 'query', (original, args) => (judge(args[0]) ?? original(...args)));
 * ```
 */
export function wrapMethod<C extends object>(
  client: C,
  method: string,
  wrapper: (original: (...args: unknown[]) => unknown, args: unknown[]) => unknown,
): void {
  const original = (client as Record<string, unknown>)[method];
  if (typeof original !== 'function') return;
  let wrapped = wrappedMethods.get(client);
  if (wrapped === undefined) {
    wrapped = new Set();
    wrappedMethods.set(client, wrapped);
  }
  if (wrapped.has(method)) return;
  wrapped.add(method);
  Object.defineProperty(client, method, {
    configurable: true,
    writable: true,
    value: function guarded(this: unknown, ...args: unknown[]) {
      return wrapper((...a: unknown[]) => (original as (...b: unknown[]) => unknown).apply(this, a), args);
    },
  });
}

/**
 * For store authors: makes `methods` of the app's client refuse (`OwnTransactionError`, as a rejected
 * promise recorded on the delivery) when called from inside a delivery of `store` (see `openDelivery`),
 * and behave as before everywhere else, including after the delivery ended. Wraps each method once per
 * client, on the instance the store was given (own properties, nothing of the library's internals),
 * however many stores share the client; the stores open their transactions through the originals it
 * returns.
 *
 * @example
 * ```ts
 * const own = refuseOwnTransactions(db, ['transaction'], scope, 'DrizzleStore');
 * await own.transaction(async (tx) => work(tx)); // the store's own calls still work
 * ```
 */
export function refuseOwnTransactions<C extends object, M extends keyof C & string>(
  client: C,
  methods: readonly M[],
  store: object,
  storeName: string,
  /** How to name a method in the error, when the app may call it without knowing (MikroORM's flush). */
  calls: Partial<Record<M, string>> = {},
): Pick<C, M> {
  const guard = clientGuard(client, store, storeName);
  const originals = originalsOf(client);
  for (const method of methods) {
    const original = client[method];
    if (typeof original !== 'function' || method in originals) continue;
    originals[method] = (original as (...args: unknown[]) => unknown).bind(client);
    Object.defineProperty(client, method, {
      configurable: true,
      writable: true,
      value: function guarded(this: unknown, ...args: unknown[]) {
        const inside = guard.running();
        if (inside !== undefined) {
          const call = calls[method] ?? `${method}()`;
          return refusedValue(inside.delivery.refuse(new OwnTransactionError(inside.store, call)));
        }
        return (original as (...a: unknown[]) => unknown).apply(this, args);
      },
    });
  }
  return originals as unknown as Pick<C, M>;
}

const originalsByClient = new WeakMap<object, Record<string, (...args: unknown[]) => unknown>>();

function originalsOf(client: object): Record<string, (...args: unknown[]) => unknown> {
  let originals = originalsByClient.get(client);
  if (originals === undefined) {
    originals = {};
    originalsByClient.set(client, originals);
  }
  return originals;
}
