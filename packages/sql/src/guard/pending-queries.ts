import { guardTransaction } from '@service-pay/core';
import type { DeliveryScope } from '@service-pay/core/node';
import { statementKind } from './statement-kind.js';
import { abortedTransactionError } from './transaction-errors.js';

/**
 * The error a delivery fails with when the handler returned while a write it built through `ctx.tx` was
 * never awaited, on a client that sends a query only when it is awaited (Prisma, Drizzle, Knex,
 * postgres.js): committing would record the payment without that write. Code `QUERY_NOT_AWAITED` (500,
 * nothing recorded, the sender's retry runs the handler again).
 *
 * @example
 * ```ts
 * if (error instanceof QueryNotAwaitedError) console.error('add the missing await');
 * ```
 */
export class QueryNotAwaitedError extends Error {
  /** Stable code for logs and tests. */
  readonly code = 'QUERY_NOT_AWAITED';

  constructor(store: string, what: string) {
    super(
      `${store}: onPaymentPaid returned without awaiting a query it built through ctx.tx (${what}). This ` +
        'client sends a query only when it is awaited, so committing now would record the payment without ' +
        'that write: the delivery is answered 500, nothing is recorded, and the retry runs the handler ' +
        'again. Add the missing `await` (the lint rule @typescript-eslint/no-floating-promises finds them).',
    );
    this.name = 'QueryNotAwaitedError';
  }
}

const promiseThen = Promise.prototype.then;
/** What `#late` answers while the call is not late, or is to be refused by the guard as before. */
const NOT_LATE = Symbol('not late');
const promiseFinally = Promise.prototype.finally;

/**
 * What the handler gets in place of an eager query's promise: the query's outcome, as a promise behaves
 * (`then`, `catch`, `finally`, awaitable), noting whether anyone looked at it. Not a Promise subclass: with
 * async hooks on (any AsyncLocalStorage on Node 20), promises of a second shape make the hooks' property
 * reads and writes on every promise of the process megamorphic: a Kysely delivery pays 29,000 more
 * instructions of its 337,000 for them (valgrind, a process of store deliveries). This object is no
 * promise, so no hook sees it, as Drizzle's and Prisma's queries are thenables and not promises.
 */
class WatchedQuery<T> implements Promise<T> {
  readonly [Symbol.toStringTag] = 'Promise';
  observed = false;

  constructor(
    /** The client's own promise of the query. */
    readonly query: Promise<T>,
  ) {}

  // biome-ignore lint/suspicious/noThenProperty: a promise's face, that notes whether anyone awaited it
  then<A = T, B = never>(
    onFulfilled?: ((value: T) => A | PromiseLike<A>) | null,
    onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): Promise<A | B> {
    this.observed = true;
    return promiseThen.call(this.query, onFulfilled, onRejected) as Promise<A | B>;
  }

  catch<B = never>(onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null): Promise<T | B> {
    this.observed = true;
    return promiseThen.call(this.query, undefined, onRejected) as Promise<T | B>;
  }

  finally(onFinally?: (() => void) | null): Promise<T> {
    this.observed = true;
    return promiseFinally.call(this.query, onFinally) as Promise<T>;
  }
}

/** What a lazy query is, for the error: how it was built (`ctx.tx.insert(…).values(…)`). */
interface Lazy {
  readonly method: string;
}

/**
 * The transaction guard's rules for `ctx.tx` (core's `guardTransaction` options but `ended`): given to
 * `PendingQueries.wrap`, they are checked by the same proxy that follows the handler's queries, so a call
 * through `ctx.tx` crosses one proxy, not two. Made once per store.
 */
export type TransactionRules = Omit<Parameters<typeof guardTransaction>[1], 'ended'>;

/**
 * `ctx.tx` guarded by `rules` in the top proxy: where a client's own call gets `ctx.tx` back as an argument,
 * it gets what the guard alone would give (`guardTransaction`'s proxy, made then), as when the guard was a
 * proxy of its own under this one.
 */
class GuardedTop {
  #guarded: object | undefined;

  constructor(
    readonly tx: object,
    readonly ended: () => boolean,
    readonly rules: TransactionRules,
  ) {}

  get guarded(): object {
    this.#guarded ??= guardTransaction(this.tx, { ...this.rules, ended: this.ended });
    return this.#guarded;
  }
}

/** One proxy of the handler's: the name of what it wraps (for the error), readable and renamed as before. */
interface Followed {
  readonly proxy: object;
  name: string | undefined;
}

/**
 * What the handler started through `ctx.tx` and has not finished. A query of a client that runs it at
 * once (a native promise: node-postgres, Kysely's `execute`, TypeORM, mysql2) is waited for before the
 * commit, and if it failed unobserved the delivery fails with its error. A query of a client that sends it
 * only when awaited (any other thenable: Prisma, Drizzle, Knex, postgres.js) must have been awaited (or
 * chained into another query, or passed to one) by then; a write never awaited fails the delivery with
 * `QueryNotAwaitedError`. An un-awaited read loses nothing and is let go.
 */
export class PendingQueries {
  /** Made on first use, as are the other collections: a handler starts one or two queries, many none. */
  #eager: Set<WatchedQuery<unknown>> | undefined;
  #lazy: Map<object, Lazy> | undefined;
  /**
   * The proxy of each object the handler got, with how it was built (`insert.values`), for the error. A Map
   * made on first use: a WeakMap (two of them, before) cost more to make and to collect, and the delivery's
   * proxies keep their objects alive anyway.
   */
  #followed: Map<object, Followed> | undefined;
  /**
   * Each proxy the handler was given, to the client's own object behind it (unwrapped when passed back to
   * the client); the top proxy of a guarded `ctx.tx` maps to its `GuardedTop` (see `#unwrapped`). The
   * delivery's own map, not one for the process: a WeakMap that outlives the deliveries kept each one's
   * proxies and objects through the young generation's collections until a full one (the heap of a store
   * count grew by 1 MB between two such collections, each some ten times slower), and a proxy belongs to
   * one delivery anyway.
   */
  readonly #targets = new Map<object, object>();
  /** A query through `ctx.tx` failed during this delivery, whether or not the handler caught it. */
  #failed = false;
  /** The first failure that ended the transaction on the server (`abortsTransaction`), if any. */
  #aborted: unknown;

  constructor(
    private readonly store: string,
    /** Whether a query's error means the server rolled the transaction back (MySQL's deadlock). */
    private readonly abortsTransaction?: (error: unknown) => boolean,
    /** The delivery's scope: a call through `ctx.tx` after its end is reported to it as a late use. */
    private readonly scope?: DeliveryScope,
  ) {}

  /**
   * For a call through `ctx.tx` (or anything the handler got from it) after the delivery ended: reports it
   * as a late use and answers what the scope says (a value that never settles, once the handler has
   * returned), or `NOT_LATE` to let the call go on to the guard, which refuses it as it refuses any call on
   * an ended transaction. Asked on every call: one field read while the delivery is open.
   */
  #late(owner: Followed | undefined, property: string | symbol | undefined): unknown {
    const scope = this.scope;
    if (scope === undefined || !scope.ended) return NOT_LATE;
    const answer = scope.lateUse(this.store, callName(owner, property));
    return answer === undefined ? NOT_LATE : answer;
  }

  /**
   * A nested transaction the handler opened on `ctx.tx` (Knex's `trx.transaction()`, which MikroORM's
   * `em.transactional(fn, { ctx: ctx.tx })` opens as a savepoint) sends its statements through its own
   * object, not `ctx.tx`: held in the delivery's scope until it ends (`executionPromise`), so the store
   * commits after its writes, even when the handler did not await it. One property read per eager result.
   */
  #holdNested(value: unknown): void {
    const ending = (value as { executionPromise?: unknown } | null | undefined)?.executionPromise;
    if (ending instanceof Promise && typeof value === 'function') this.scope?.hold(ending);
  }

  /** The failure with which the server rolled the delivery's transaction back, if one was seen. */
  get aborted(): unknown {
    return this.#aborted;
  }

  #fail(error: unknown): void {
    this.#failed = true;
    if (this.#aborted === undefined && this.abortsTransaction?.(error)) this.#aborted = error;
  }

  /**
   * True once a query the handler sent through `ctx.tx` failed, caught or not: on a database where that
   * leaves the transaction unable to commit, the store checks before its COMMIT (`SqlDialect.soundCheck`).
   */
  get failed(): boolean {
    return this.#failed;
  }

  /**
   * `tx` as the handler sees it: every call's result followed as above. With `rules`, `tx`'s own calls are
   * also guarded as core's `guardTransaction` guards them (refused once `ended()`, no transaction control
   * through a raw-text method), in the same proxy.
   */
  wrap<Tx>(tx: Tx, guard?: { ended: () => boolean; rules: TransactionRules }): Tx {
    if (guard === undefined) return this.#wrap(tx as object, 0, undefined) as Tx;
    return this.#guardedTop(tx as object, guard.ended, guard.rules) as Tx;
  }

  /** True while an eager query the handler started has not succeeded: `settle` has something to wait for. */
  get waiting(): boolean {
    return this.#eager !== undefined && this.#eager.size > 0;
  }

  /**
   * Waits for the eager queries and answers the delivery's failure, if any: an eager query that failed
   * unobserved, or a lazy write never awaited.
   */
  async settle(): Promise<Error | undefined> {
    let failure: unknown;
    const eager = this.#eager;
    while (eager !== undefined && eager.size > 0) {
      const entries = [...eager];
      eager.clear();
      for (const watched of entries) {
        try {
          await watched.query;
        } catch (error) {
          if (!watched.observed) failure ??= error;
        }
      }
    }
    if (failure !== undefined) return failure instanceof Error ? failure : new Error(String(failure));
    return this.unawaited();
  }

  /** A lazy write the handler never awaited, as the delivery's failure (nothing to wait for: see `settle`). */
  unawaited(): Error | undefined {
    if (this.#lazy === undefined) return undefined;
    for (const [target, lazy] of this.#lazy) {
      if (isRead(target, lazy)) continue;
      return new QueryNotAwaitedError(this.store, lazy.method);
    }
    return undefined;
  }

  /**
   * The top proxy: core's one `ctx.tx` proxy (`guardTransaction`) with the guard's rules, this delivery
   * following each call in it. Each of `tx`'s methods, and `tx` called, first answers a late use, then the
   * guard refuses once the delivery ended (`endedError`), and transaction control through a raw-text
   * method (`nestedError`), then the call runs on `tx` itself, its result followed. Everything else as
   * `#wrap` at depth 0: nothing is renamed, superseded or returned as this proxy.
   */
  #guardedTop(tx: object, ended: () => boolean, rules: TransactionRules): object {
    const proxy = guardTransaction(
      tx,
      { ...rules, ended },
      {
        instead: (property, proceed) => {
          const late = this.#late(undefined, property);
          return late === NOT_LATE ? proceed : late;
        },
        args: (args) => this.#unwrapped(args),
        callArgs: (property, args) => this.#followCallback(property, args),
        result: (value, property) => this.#result(value, undefined, property),
        // One level of objects (Prisma's model delegates: `ctx.tx.order.create(...)`).
        member: (value, property) => this.#wrap(value, 1, `ctx.tx.${property}`),
      },
    );
    this.#targets.set(proxy, new GuardedTop(tx, ended, rules));
    return proxy;
  }

  /**
   * The proxy of `value` (made once per delivery). `name`: how it was built, for the error; a result is
   * renamed by the latest call that answered it (`rename`), a model delegate keeps its first name.
   */
  #wrap(value: object, depth: number, name: string | undefined, rename = false): object {
    this.#followed ??= new Map();
    const known = this.#followed.get(value);
    if (known !== undefined) {
      if (rename || known.name === undefined) known.name = name;
      return known.proxy;
    }
    const pending = this;
    const proxy = new Proxy(value, {
      apply(target, _thisArg, args) {
        const late = pending.#late(followed, undefined);
        if (late !== NOT_LATE) return late;
        return pending.#result(Reflect.apply(target as never, target, pending.#unwrapped(args)), followed, undefined);
      },
      get(target, property) {
        const member = Reflect.get(target, property);
        if (typeof member === 'function' && property !== 'constructor') {
          if (property === 'then' || property === 'catch') {
            return (...args: unknown[]) => {
              pending.#lazy?.delete(target);
              const late = pending.#late(followed, property);
              if (late !== NOT_LATE) return late;
              // The server rolled the transaction back (a deadlock): a lazy query (Prisma's model calls, which
              // no guard sees being made) is refused when it would be sent, or it would commit on its own.
              if (pending.#aborted !== undefined) {
                const refused = Promise.reject(abortedTransactionError(pending.store, pending.#aborted));
                return property === 'then'
                  ? promiseThen.call(refused, args[0] as never, args[1] as never)
                  : promiseThen.call(refused, undefined, args[0] as never);
              }
              // The query's failure is noted on its way to the handler's own reaction (`await` passes one).
              const at = property === 'then' ? 1 : 0;
              const handled = args[at];
              const rest = [...args];
              rest[at] = (error: unknown) => {
                pending.#fail(error);
                if (typeof handled === 'function') return handled(error);
                throw error;
              };
              return (member as (...a: unknown[]) => unknown).apply(target, rest);
            };
          }
          if (property === 'finally') {
            return (...args: unknown[]) => {
              pending.#lazy?.delete(target);
              return (member as (...a: unknown[]) => unknown).apply(target, args);
            };
          }
          return (...args: unknown[]) => {
            const late = pending.#late(followed, property);
            if (late !== NOT_LATE) return late;
            let result: unknown;
            try {
              const unwrapped = pending.#unwrapped(args);
              result = (member as (...a: unknown[]) => unknown).apply(
                target,
                pending.#followCallback(property, unwrapped),
              );
            } catch (error) {
              // A client that runs statements synchronously (better-sqlite3) fails them with a throw.
              pending.#fail(error);
              throw error;
            }
            if (result === target) return proxy;
            // A builder method chained onto a query makes a new query: the old one is superseded.
            pending.#lazy?.delete(target);
            return pending.#result(result, followed, property);
          };
        }
        // One level of objects (Prisma's model delegates: `ctx.tx.order.create(...)`).
        if (depth === 0 && typeof member === 'object' && member !== null && typeof property === 'string') {
          return pending.#wrap(member, 1, `ctx.tx.${property}`);
        }
        return member;
      },
    });
    const followed: Followed = { proxy, name };
    this.#followed.set(value, followed);
    this.#targets.set(proxy, value);
    return proxy;
  }

  /**
   * The arguments of a statement sent with a callback (`query(sql, values, cb)`: mysql2's callback face,
   * `ctx.tx.connection`, and node-postgres' callback form), its callback replaced by one that notes the
   * statement's failure first, as a promise's is noted: a deadlock caught there has rolled the transaction
   * back as surely. Only `query` and `execute`, whose callbacks take the error first; a listener (`on`) is
   * left as it is, or `off` would not find it.
   */
  #followCallback(property: string | symbol, args: unknown[]): unknown[] {
    if (property !== 'query' && property !== 'execute') return args;
    const last = args.length - 1;
    const callback = args[last];
    if (typeof callback !== 'function') return args;
    const pending = this;
    const followed = [...args];
    followed[last] = function noted(this: unknown, error: unknown, ...rest: unknown[]) {
      // An Error only: a callback of another shape (Kysely's `execute(async (db) => …)`) is no failure.
      if (error instanceof Error) pending.#fail(error);
      return (callback as (...a: unknown[]) => unknown).call(this, error, ...rest);
    };
    return followed;
  }

  /** Arguments as the client expects them (its own objects, not our proxies); a query passed on is used. */
  #unwrapped(args: unknown[]): unknown[] {
    // Most calls pass none of our proxies: the arguments as they are, no copy.
    let unwrapped: unknown[] | undefined;
    for (let i = 0; i < args.length; i++) {
      const arg = args[i];
      let target = typeof arg === 'object' || typeof arg === 'function' ? this.#targets.get(arg as object) : undefined;
      if (target === undefined) continue;
      // A guarded ctx.tx passed back: the guard's own proxy (never a query of the handler's).
      if (target instanceof GuardedTop) target = target.guarded;
      else this.#lazy?.delete(target);
      unwrapped ??= [...args];
      unwrapped[i] = target;
    }
    return unwrapped ?? args;
  }

  /**
   * What the handler gets for `result`, answered by `property` called on `owner` (on `ctx.tx` itself when
   * `owner` is undefined; `owner` called when `property` is): data as it is, an eager query watched, anything
   * else followed. How it was built is put into words only for what keeps it (most results are data or
   * eager queries, and a name per call was a string built on each of them).
   */
  #result(result: unknown, owner: Followed | undefined, property: string | symbol | undefined): unknown {
    if ((typeof result !== 'object' && typeof result !== 'function') || result === null) return result;
    const then = (result as { then?: unknown }).then;
    if (typeof then !== 'function') {
      return isData(result) ? result : this.#wrap(result as object, 1, callName(owner, property), true);
    }
    if (result instanceof Promise && result.constructor === Promise) {
      this.#eager ??= new Set();
      const eager = this.#eager;
      const watched = new WatchedQuery(result);
      // The store's reaction comes first, so it has run by the time the handler's own does: a query that
      // succeeded has left the set (a failed one stays, for `settle` to judge), a failure is noted. Its promise
      // fulfils either way (the failure is the handler's to see, through `then`), so a failure nobody looked
      // at is never reported as unhandled. The handler's reactions are on the query itself, no step between.
      promiseThen.call(
        result,
        (value) => {
          eager.delete(watched);
          this.#holdNested(value);
        },
        (error: unknown) => this.#fail(error),
      );
      eager.add(watched);
      return watched;
    }
    const method = callName(owner, property);
    this.#lazy ??= new Map();
    this.#lazy.set(result as object, { method });
    return this.#wrap(result as object, 1, method, true);
  }
}

/** How a call was written: `ctx.tx.insert(…)`, `ctx.tx.insert(…).values(…)`, `ctx.tx(…)`. */
function callName(owner: Followed | undefined, property: string | symbol | undefined): string {
  const called = owner?.name ?? 'ctx.tx';
  return property === undefined ? `${called}(…)` : `${called}.${String(property)}(…)`;
}

/**
 * True for a frozen plain object (Kysely's operation nodes and compiled queries, met on every query built
 * through `ctx.tx`): data, never a query builder, so it is handed over as it is rather than followed (a
 * proxy per object was a large share of a Kysely delivery's own work). Its only methods are
 * Object.prototype's, none of which starts a query, and a proxy could not even hand out a function of its
 * own (a frozen property must read as itself).
 */
function isData(value: object): boolean {
  if (!Object.isFrozen(value)) return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/** Prisma's operations that only read. */
const PRISMA_READS = /^(?:find\w*|count|aggregate|groupBy|\$queryRaw\w*)$/;

/** True for a lazy query known to be a read (its SQL text, or the Prisma operation that built it). */
function isRead(target: object, lazy: Lazy): boolean {
  const last = /\.?(\$?\w+)\(…\)$/.exec(lazy.method)?.[1] ?? '';
  if (PRISMA_READS.test(last)) return true;
  const toSql = (target as { toSQL?: unknown }).toSQL;
  if (typeof toSql === 'function') {
    try {
      const compiled = toSql.call(target) as unknown;
      const list = Array.isArray(compiled) ? compiled : [compiled];
      return list.every((one) => statementKind((one as { sql?: unknown } | null)?.sql) === 'read');
    } catch {
      return false;
    }
  }
  // postgres.js: the tagged template's strings.
  const strings = (target as { strings?: unknown }).strings;
  if (Array.isArray(strings)) return statementKind(strings.join('$')) === 'read';
  return false;
}
