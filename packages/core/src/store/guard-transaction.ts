/** What `guardTransaction` checks, and the errors it throws. */
export interface TransactionGuardOptions {
  /** True once the delivery has ended (committed, rolled back, past its deadline). */
  ended: () => boolean;
  /** Names of the transaction object's methods that take SQL text first (`execute`, `query`, ...). */
  rawTextMethods: readonly string[];
  /** True for SQL text that would end or restart the transaction (BEGIN, COMMIT, ROLLBACK, ...). */
  endsTransaction: (text: unknown) => boolean;
  /** What a call after the end throws. */
  endedError: () => Error;
  /** What transaction-control SQL through a raw-text method throws. */
  nestedError: () => Error;
}

/**
 * For store authors: the client's transaction object as a handler sees it (`ctx.tx`). Every method works,
 * but none once the delivery has ended (the client would otherwise run a late handler's statement on a
 * connection back in its pool, outside any transaction), and no BEGIN/COMMIT/ROLLBACK through its raw-SQL
 * methods. Methods run with the real object as `this` (ORMs keep private fields); a callable object
 * (postgres.js's `sql`) stays callable.
 *
 * @example
 * ```ts
 * const tx = guardTransaction(held.tx, { ended: () => done, rawTextMethods: ['execute'], endsTransaction, endedError, nestedError });
 * ```
 */
export function guardTransaction<Tx>(tx: Tx, options: TransactionGuardOptions): Tx {
  const { ended, rawTextMethods, endsTransaction, endedError, nestedError } = options;
  const open = () => {
    if (ended()) throw endedError();
  };
  return new Proxy(tx as object, {
    apply(fn, _thisArg, args) {
      open();
      return Reflect.apply(fn as never, tx, args);
    },
    get(object, property) {
      const value = Reflect.get(object, property);
      if (typeof value !== 'function' || property === 'constructor') return value;
      const raw = rawTextMethods.includes(property as string);
      return (...args: unknown[]) => {
        open();
        if (raw && endsTransaction(args[0])) throw nestedError();
        return (value as (...a: unknown[]) => unknown).apply(object, args);
      };
    },
  }) as Tx;
}
