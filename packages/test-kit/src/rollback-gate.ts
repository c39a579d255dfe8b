/**
 * Holds every ROLLBACK the connections it patches send, while it is closed, and counts those held: a test
 * then sees whether an answer came before a transaction's ROLLBACK was done, or waited for it. Patch each
 * connection as its pool lends it (`pool.on('acquire', gate.patch)`): every statement of node-postgres'
 * clients and of mysql2's callback connections (their `rollback()` too) goes through `query`.
 *
 * @example
 * ```ts
 * const gate = rollbackGate();
 * pool.on('acquire', gate.patch);
 * gate.close();
 * const answer = store.begin(key, 'fp', draft); // a duplicate
 * await waitFor('its ROLLBACK', () => gate.waiting === 1, { timeoutMs: 5_000 });
 * gate.open();
 * ```
 */
export interface RollbackGate {
  /** ROLLBACKs sent while closed and not yet let through. */
  readonly waiting: number;
  /** From now on, every ROLLBACK waits until `open()`. */
  close(): void;
  /** Lets the held ROLLBACKs through, and every later one at once. */
  open(): void;
  /** Routes `connection.query` through the gate (once per connection, however often it is lent). */
  patch(connection: object): void;
}

/** A gate, open until `close()`. */
export function rollbackGate(): RollbackGate {
  let gate: Promise<void> | undefined;
  let release = () => {};
  let waiting = 0;
  const patched = new WeakSet<object>();
  return {
    get waiting() {
      return waiting;
    },
    close() {
      gate = new Promise((resolve) => {
        release = resolve;
      });
    },
    open() {
      gate = undefined;
      release();
    },
    patch(connection) {
      if (patched.has(connection)) return;
      patched.add(connection);
      const target = connection as { query: (...args: unknown[]) => unknown };
      const query = target.query;
      target.query = function gated(this: unknown, ...args: unknown[]) {
        const first = args[0];
        const text = typeof first === 'string' ? first : (first as { text?: unknown; sql?: unknown } | undefined);
        const sql = typeof text === 'string' ? text : (text?.text ?? text?.sql);
        const run = () => query.apply(this, args);
        if (gate === undefined || typeof sql !== 'string' || !/^\s*rollback\s*$/i.test(sql)) return run();
        waiting++;
        // node-postgres' caller awaits this promise for its answer. mysql2's callback connection answers through
        // its callback, its caller ignores what `query` returns, and its Query refuses to be awaited: not passed on.
        return gate.then(() => {
          waiting--;
          const result = run();
          return result instanceof Promise ? result : undefined;
        });
      };
    },
  };
}
