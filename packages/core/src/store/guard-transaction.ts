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
  const { ended, rawTextMethods } = options;
  return new Proxy(tx as object, {
    apply(fn, _thisArg, args) {
      refuseTransactionCall(ended, options, false, undefined);
      return Reflect.apply(fn as never, tx, args);
    },
    get(object, property) {
      const value = Reflect.get(object, property);
      if (typeof value !== 'function' || property === 'constructor') return value;
      const raw = rawTextMethods.includes(property as string);
      return (...args: unknown[]) => {
        refuseTransactionCall(ended, options, raw, args[0]);
        return (value as (...a: unknown[]) => unknown).apply(object, args);
      };
    },
  }) as Tx;
}

/**
 * For store authors: the check `guardTransaction` makes before each call on the transaction object, for a
 * store whose own proxy of `ctx.tx` does the guard's work too (one proxy per call instead of two). Throws
 * `endedError()` once `ended()`, and `nestedError()` when `raw` (the method takes SQL text first) and
 * `firstArgument` is transaction control. `ended` is apart from `rules` so that a store can make its
 * rules once and pass each delivery's `ended` without copying them.
 *
 * @example
 * ```ts
 * refuseTransactionCall(() => done, rules, rules.rawTextMethods.includes('execute'), sqlText);
 * ```
 */
export function refuseTransactionCall(
  ended: () => boolean,
  rules: Omit<TransactionGuardOptions, 'ended'>,
  raw: boolean,
  firstArgument: unknown,
): void {
  if (ended()) throw rules.endedError();
  if (raw && rules.endsTransaction(firstArgument)) throw rules.nestedError();
}
