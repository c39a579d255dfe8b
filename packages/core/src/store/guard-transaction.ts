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
 * What a store that follows the handler's calls through `ctx.tx` (the SQL layer's pending queries) does
 * inside the one `ctx.tx` proxy, around the guard's own check. `property` is the method called, undefined
 * when `ctx.tx` itself is called.
 */
export interface TransactionCallFollower {
  /** Asked first on every call: a value to answer instead of making it (a late use), or `proceed`. */
  instead(property: string | symbol | undefined, proceed: symbol): unknown;
  /** The arguments as the client must get them (its own objects, not the follower's proxies). */
  args(args: unknown[]): unknown[];
  /** The arguments of a method call, the callback among them followed, once the guard has checked them. */
  callArgs(property: string | symbol, args: unknown[]): unknown[];
  /** What the handler gets for a call's result. */
  result(value: unknown, property: string | symbol | undefined): unknown;
  /** What the handler gets for an object `ctx.tx` holds (Prisma's model delegates: `ctx.tx.order`). */
  member(value: object, property: string): unknown;
}

const PROCEED = Symbol('proceed');

/**
 * For store authors: the client's transaction object as a handler sees it (`ctx.tx`). Every method works,
 * but none once the delivery has ended (the client would otherwise run a late handler's statement on a
 * connection back in its pool, outside any transaction), and no BEGIN/COMMIT/ROLLBACK through its raw-SQL
 * methods. Methods run with the real object as `this` (ORMs keep private fields); a callable object
 * (postgres.js's `sql`) stays callable. With `follower`, the same proxy also follows each call (one proxy
 * per call, not one for the guard and one for the follower).
 *
 * @example
 * ```ts
 * const tx = guardTransaction(held.tx, { ended: () => done, rawTextMethods: ['execute'], endsTransaction, endedError, nestedError });
 * ```
 */
export function guardTransaction<Tx>(tx: Tx, options: TransactionGuardOptions, follower?: TransactionCallFollower): Tx {
  const { rawTextMethods } = options;
  if (follower === undefined) {
    return new Proxy(tx as object, {
      apply(fn, _thisArg, args) {
        refuse(options, false, undefined);
        return Reflect.apply(fn as never, tx, args);
      },
      get(object, property) {
        const value = Reflect.get(object, property);
        if (typeof value !== 'function' || property === 'constructor') return value;
        const raw = rawTextMethods.includes(property as string);
        return (...args: unknown[]) => {
          refuse(options, raw, args[0]);
          return (value as (...a: unknown[]) => unknown).apply(object, args);
        };
      },
    }) as Tx;
  }
  return new Proxy(tx as object, {
    apply(target, _thisArg, args) {
      const late = follower.instead(undefined, PROCEED);
      if (late !== PROCEED) return late;
      const unwrapped = follower.args(args);
      refuse(options, false, undefined);
      return follower.result(Reflect.apply(target as never, target, unwrapped), undefined);
    },
    get(target, property) {
      const member = Reflect.get(target, property);
      if (typeof member === 'function' && property !== 'constructor') {
        const raw = rawTextMethods.includes(property as string);
        if (property === 'then' || property === 'catch' || property === 'finally') {
          return (...args: unknown[]) => {
            const late = follower.instead(property, PROCEED);
            if (late !== PROCEED) return late;
            refuse(options, raw, args[0]);
            return (member as (...a: unknown[]) => unknown).apply(target, args);
          };
        }
        return (...args: unknown[]) => {
          const late = follower.instead(property, PROCEED);
          if (late !== PROCEED) return late;
          const unwrapped = follower.args(args);
          refuse(options, raw, unwrapped[0]);
          const result = (member as (...a: unknown[]) => unknown).apply(target, follower.callArgs(property, unwrapped));
          return follower.result(result, property);
        };
      }
      if (typeof member === 'object' && member !== null && typeof property === 'string') {
        return follower.member(member, property);
      }
      return member;
    },
  }) as Tx;
}

/** The check before each call: `endedError()` once ended, `nestedError()` for transaction control. */
function refuse(rules: TransactionGuardOptions, raw: boolean, firstArgument: unknown): void {
  if (rules.ended()) throw rules.endedError();
  if (raw && rules.endsTransaction(firstArgument)) throw rules.nestedError();
}
