import { AsyncLocalStorage } from 'node:async_hooks';

/** The store whose delivery handler is running in this async context, if any. */
const runningHandler = new AsyncLocalStorage<object>();

/**
 * For store authors: runs a delivery's handler so that `refuseOwnTransactions` can tell it is inside that
 * store's delivery. A store's `TransactionSession.run` calls it.
 *
 * @example
 * ```ts
 * const session = { tx, run: (handler) => inDeliveryOf(store, handler), commit, rollback };
 * ```
 */
export function inDeliveryOf<T>(store: object, handler: () => Promise<T>): Promise<T> {
  return runningHandler.run(store, handler);
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
        'that truly needs its own transaction: use a client instance other than the one given to the store.)',
    );
    this.name = 'OwnTransactionError';
  }
}

/** Per client: the stores it was given to (their scopes, with their names) and its unwrapped methods. */
interface Guarded {
  stores: WeakMap<object, string>;
  originals: Record<string, (...args: unknown[]) => unknown>;
}
const guardedClients = new WeakMap<object, Guarded>();

/**
 * For store authors: makes `methods` of the app's client throw `OwnTransactionError` when called from inside
 * a handler of `store` (see `inDeliveryOf`), and behave as before everywhere else. Wraps each method once per client, on the instance the
 * store was given (own properties, nothing of the library's internals), however many stores share the
 * client; the stores open their transactions through the originals it returns.
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
): Pick<C, M> {
  let guarded = guardedClients.get(client);
  if (guarded === undefined) {
    guarded = { stores: new WeakMap(), originals: {} };
    guardedClients.set(client, guarded);
  }
  const { stores, originals } = guarded;
  stores.set(store, storeName);
  for (const method of methods) {
    if (method in originals) continue;
    const original = client[method];
    if (typeof original !== 'function') continue;
    originals[method] = (original as (...args: unknown[]) => unknown).bind(client);
    Object.defineProperty(client, method, {
      configurable: true,
      writable: true,
      value: function guarded(this: unknown, ...args: unknown[]) {
        const running = runningHandler.getStore();
        const name = running === undefined ? undefined : stores.get(running);
        if (name !== undefined) throw new OwnTransactionError(name, `${method}()`);
        return (original as (...a: unknown[]) => unknown).apply(this, args);
      },
    });
  }
  return originals as unknown as Pick<C, M>;
}
