import { AsyncResource } from 'node:async_hooks';
import { asStoreWork } from '@service-pay/core/node';
import { isReadOnlyRefusal, type RunningDelivery, serverRefusal } from '@service-pay/sql';

/** What of a postgres.js pending query the read-only run uses and answers: a lazy, chainable thenable. */
interface Pending extends PromiseLike<unknown> {
  execute?(): Pending;
}

/** Runs `build`'s query in a read-only transaction of its own and answers its result. */
export type ReadOnlyRun = (build: (sql: (...args: never[]) => unknown) => Pending) => Promise<unknown>;

/** The modifiers of a postgres.js query that answer the query itself, so they can be replayed on it. */
const MODIFIERS = ['values', 'raw', 'simple', 'describe'] as const;

/**
 * A read the app sent through its postgres.js instance during a delivery, as a pending query of its own:
 * lazy as postgres.js's (sent when awaited or `execute()`d), with the modifiers `values()`, `raw()`,
 * `simple()` and `describe()` replayed on the real query, and `forEach(fn)` and `cursor(...)` run in it
 * (without a callback, `cursor()` answers its batches as an async iterator; `close` is the instance's
 * `sql.CLOSE`, which ends a cursor the app stopped reading).
 * Sent, it runs through `run` (a read-only transaction of its own), so a write it hides (a function that
 * inserts) fails on the server; that failure becomes `WriteOutsideTransactionError` naming `ctx.tx`, recorded
 * on the delivery, whose commit waits for the answer. Sent once the delivery has ended, it is `plain()`.
 *
 * @example
 * ```ts
 * return readOnlyQuery(inside, 'sql`...`', text, (t) => t(strings, ...values), () => original(...args), run, sql.CLOSE);
 * ```
 */
export function readOnlyQuery(
  inside: RunningDelivery,
  via: string,
  text: unknown,
  build: (sql: (...args: never[]) => unknown) => Pending,
  plain: () => Pending,
  run: ReadOnlyRun,
  close: unknown,
): Pending {
  const modifiers: Array<(query: Record<string, (...a: unknown[]) => unknown>) => unknown> = [];
  let sent: Promise<unknown> | undefined;
  const send = (last?: (query: Record<string, (...a: unknown[]) => unknown>) => unknown): Promise<unknown> => {
    if (sent !== undefined) return sent;
    const shaped = (query: Pending) => {
      let shapedQuery = query as unknown as Record<string, (...a: unknown[]) => unknown>;
      for (const modify of modifiers) shapedQuery = modify(shapedQuery) as typeof shapedQuery;
      return (last === undefined ? shapedQuery : last(shapedQuery)) as Pending;
    };
    if (inside.delivery.ended) {
      sent = Promise.resolve(shaped(plain()));
      return sent;
    }
    sent = run((sql) => shaped(build(sql))).then(undefined, (error: unknown) => {
      if (!isReadOnlyRefusal(error)) throw error;
      const refusal = serverRefusal(inside.store, text, via);
      void inside.delivery.refuse(refusal);
      throw refusal;
    });
    inside.delivery.hold(sent);
    return sent;
  };
  const pending: Pending & Record<string, unknown> = {
    // biome-ignore lint/suspicious/noThenProperty: it stands for postgres.js's lazy query, which is a thenable.
    then: (resolve, reject) => send().then(resolve, reject),
    catch: (reject: (error: unknown) => unknown) => send().catch(reject),
    finally: (done: () => void) => send().finally(done),
    execute: () => {
      void send().catch(() => {});
      return pending;
    },
    // The app's callbacks run in its own context, not in the read-only transaction's (the store's work).
    forEach: (fn: unknown) => {
      const each = callerBound(fn);
      return send((query) => query.forEach?.(each));
    },
    cursor: (rows: unknown, fn?: unknown) => {
      const each = callerBound(typeof rows === 'function' ? rows : fn);
      const size = typeof rows === 'function' ? 1 : rows;
      if (typeof each === 'function') return send((query) => query.cursor?.(size, each));
      return batches(close, (give) => send((query) => query.cursor?.(size, give)));
    },
  };
  for (const modifier of MODIFIERS) {
    pending[modifier] = (...args: unknown[]) => {
      modifiers.push((query) => query[modifier]?.(...args));
      return pending;
    };
  }
  return pending;
}

/**
 * The read-only run on a postgres.js instance: its own `begin('read only', ...)` (BEGIN READ ONLY, the
 * statement, COMMIT on one of its connections, three round trips), opened as the store's own work so the
 * instance's guard does not judge its BEGIN. The connection goes back to the pool with the transaction
 * ended, so nothing of the mode outlives the statement.
 *
 * @example
 * ```ts
 * const run = readOnlyOnInstance(originalBegin);
 * ```
 */
export function readOnlyOnInstance(begin: (options: string, fn: (sql: never) => unknown) => unknown): ReadOnlyRun {
  return (build) => asStoreWork(() => Promise.resolve(begin('read only', (sql) => build(sql))));
}

/** `fn` bound to the caller's async context, when it is a function. */
function callerBound(fn: unknown): unknown {
  return typeof fn === 'function' ? AsyncResource.bind(fn as (...args: unknown[]) => unknown) : fn;
}

/**
 * A cursor's batches as an async iterator, from its callback form `start(give)`: each batch waits in `give`
 * until the app asks for the next one, and the app's `break` answers `close`, which ends the cursor (and so
 * its read-only transaction) before `return()` resolves.
 */
function batches(
  close: unknown,
  start: (give: (batch: unknown) => Promise<unknown>) => Promise<unknown>,
): AsyncIterableIterator<unknown> {
  let ready: { batch: unknown; answer: (value: unknown) => void } | undefined;
  let answer: ((value: unknown) => void) | undefined;
  let waiting: { resolve: (result: IteratorResult<unknown>) => void; reject: (error: unknown) => void } | undefined;
  let outcome: { error?: unknown } | undefined;
  let finished: Promise<void> | undefined;
  let closing = false;
  const settle = () => {
    const waiter = waiting;
    if (waiter === undefined) return;
    if (ready !== undefined) {
      waiting = undefined;
      answer = ready.answer;
      const { batch } = ready;
      ready = undefined;
      waiter.resolve({ value: batch, done: false });
    } else if (outcome !== undefined) {
      waiting = undefined;
      if ('error' in outcome) waiter.reject(outcome.error);
      else waiter.resolve({ value: undefined, done: true });
    }
  };
  const begin = () => {
    finished ??= start(
      (batch) =>
        new Promise((resolve) => {
          if (closing) return resolve(close);
          ready = { batch, answer: resolve };
          settle();
        }),
    ).then(
      () => {
        outcome = {};
        settle();
      },
      (error: unknown) => {
        outcome = { error };
        settle();
      },
    );
    return finished;
  };
  const release = (value: unknown) => {
    const give = answer;
    answer = undefined;
    give?.(value);
  };
  return {
    [Symbol.asyncIterator]() {
      return this;
    },
    next() {
      release(undefined);
      void begin();
      return new Promise((resolve, reject) => {
        waiting = { resolve, reject };
        settle();
      });
    },
    async return() {
      closing = true;
      if (finished !== undefined) {
        release(close);
        await finished;
      }
      return { value: undefined, done: true };
    },
  };
}

/** A pending query sent now (`forEach` and `cursor` answer one already sent). */
function sent(query: Pending): PromiseLike<unknown> {
  return typeof query.execute === 'function' ? query.execute() : query;
}

/**
 * The read-only run on a reserved connection (`sql.reserve()`): `begin read only`, the statement and
 * `rollback` sent together on that connection (postgres.js pipelines them), so the read costs no wait in
 * between and the connection is left with no transaction open.
 *
 * @example
 * ```ts
 * const run = readOnlyOnReserved(reserved, originalUnsafe);
 * ```
 */
export function readOnlyOnReserved(
  reserved: (...args: never[]) => unknown,
  unsafe: (text: string) => Pending,
): ReadOnlyRun {
  // As the store's own work: the reserved connection's guarded methods do not judge these again.
  return (build) =>
    asStoreWork(() => {
      // Each is sent at its call, in call order: the statement lands between its BEGIN and its ROLLBACK.
      void Promise.resolve(sent(unsafe('begin read only'))).catch(() => {});
      const answer = Promise.resolve(sent(build(reserved)));
      void Promise.resolve(sent(unsafe('rollback'))).catch(() => {});
      return answer;
    });
}
