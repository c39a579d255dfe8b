import { AsyncLocalStorage } from 'node:async_hooks';

/** The store whose delivery handler is running in this async context, if any. */
const runningHandler = new AsyncLocalStorage<object>();

/** Runs a delivery's handler so that `refuseOwnTransactions` can tell it is inside that store's delivery. */
export function inDeliveryOf<T>(store: object, handler: () => Promise<T>): Promise<T> {
  return runningHandler.run(store, handler);
}

/**
 * The error the handler gets for opening the client's own transaction while a delivery's transaction is
 * open: that second transaction would commit its credit whatever happens to the delivery (a throw, a
 * deadline, a failed commit), and the sender's retry would credit again.
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

/**
 * Makes `methods` of the app's client throw `OwnTransactionError` when called from inside a handler of
 * `store`, and behave as before everywhere else. Wraps the methods on the instance the store was given
 * (own properties, nothing of the library's internals); the store opens its transactions through the
 * originals it returns.
 */
export function refuseOwnTransactions<C extends object, M extends keyof C & string>(
  client: C,
  methods: readonly M[],
  store: object,
  storeName: string,
): Pick<C, M> {
  const originals = {} as Pick<C, M>;
  for (const method of methods) {
    const original = client[method];
    if (typeof original !== 'function') continue;
    const bound = (original as (...args: unknown[]) => unknown).bind(client);
    (originals as Record<string, unknown>)[method] = bound;
    // Idempotent when two stores share a client: each adds its own check around the previous one.
    Object.defineProperty(client, method, {
      configurable: true,
      writable: true,
      value: function guarded(this: unknown, ...args: unknown[]) {
        if (runningHandler.getStore() === store) throw new OwnTransactionError(storeName, `${method}()`);
        return (original as (...a: unknown[]) => unknown).apply(this, args);
      },
    });
  }
  return originals;
}
