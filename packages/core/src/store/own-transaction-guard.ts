import { currentDelivery, type DeliveryScope, inStoreWork, refusedValue } from './delivery-scope.js';

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
  running(): { delivery: DeliveryScope; store: string } | undefined {
    const delivery = currentDelivery();
    if (delivery === undefined || delivery.ended) return undefined;
    const store = this.#stores.get(delivery.store);
    return store === undefined ? undefined : { delivery, store };
  }

  /** True inside `asStoreWork`: the store itself is checking out a connection for a delivery. */
  storeWork(): boolean {
    return inStoreWork();
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
