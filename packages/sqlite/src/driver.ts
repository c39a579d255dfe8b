import type { TransactionClaim } from '@service-pay/core';

/**
 * What `SqliteStore` asks of a SQLite client (better-sqlite3, libsql). One file per client; the store
 * itself only checks options and picks one.
 */
export interface Driver<Tx> {
  begin(key: string, fingerprint: string): Promise<TransactionClaim<Tx>>;
  migrate(): Promise<void>;
  prune(olderThanMs: number): Promise<number>;
}

/**
 * Retry-After for a busy database: SQLite has one writer, and the delivery holding it may take up to its
 * handler's deadline. The sender retries; by then it has usually committed.
 */
export const IN_PROGRESS_RETRY_MS = 1_000;

/** Rows deleted per statement by `prune`, so a large trim never holds the write lock for long. */
export const PRUNE_BATCH = 5_000;

/**
 * One connection runs one transaction at a time. Per connection (shared by every store on it): whether a
 * delivery transaction of ours is open, and who waits for it to end (`migrate`, `prune`). A `begin` never
 * waits: it answers `in-progress` at once, like a held key on a server database.
 */
export class ConnectionGate {
  static #gates = new WeakMap<object, ConnectionGate>();
  #held = false;
  #waiters: (() => void)[] = [];

  /** The gate of one connection object. */
  static of(connection: object): ConnectionGate {
    let gate = ConnectionGate.#gates.get(connection);
    if (gate === undefined) {
      gate = new ConnectionGate();
      ConnectionGate.#gates.set(connection, gate);
    }
    return gate;
  }

  /** Takes the connection if it is free; false if a transaction of ours holds it. */
  tryEnter(): boolean {
    if (this.#held) return false;
    this.#held = true;
    return true;
  }

  /** Takes the connection, waiting for the transaction that holds it. */
  async enter(): Promise<void> {
    while (!this.tryEnter()) await new Promise<void>((resolve) => this.#waiters.push(resolve));
  }

  leave(): void {
    this.#held = false;
    this.#waiters.shift()?.();
  }
}

/** SQLITE_BUSY (and SQLITE_BUSY_*, SQLITE_LOCKED): another connection holds the write lock. */
export function isBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'));
}

/** The error a statement through `ctx.tx` gets once its transaction has ended (committed, rolled back). */
export function endedError(): Error {
  return new Error(
    'SqliteStore: this delivery transaction has ended (committed, rolled back or past its deadline); ' +
      'ctx.tx cannot be used after onPaymentPaid returned or timed out.',
  );
}

/** A missing inbox table is a setup mistake: say the fix instead of "no such table". */
export function explainError(error: unknown, tableName: string): unknown {
  const message = (error as { message?: unknown } | null)?.message;
  if (typeof message === 'string' && message.includes('no such table')) {
    return new Error(
      `SqliteStore: the inbox table ${tableName} does not exist; run await store.migrate() once at start-up.`,
      { cause: error },
    );
  }
  return error;
}

/**
 * Statements that would end or restart the delivery's transaction from inside the handler: BEGIN, COMMIT,
 * END, ROLLBACK (savepoints, `ROLLBACK TO` included, are fine). COMMIT would commit the credit without the
 * inbox row.
 */
export function endsTransaction(text: unknown): boolean {
  if (typeof text !== 'string') return false;
  const match = /^\s*([A-Za-z]+)(?:\s+([A-Za-z]+))?/.exec(text);
  if (match === null) return false;
  const first = (match[1] as string).toLowerCase();
  if (first === 'begin' || first === 'commit' || first === 'end') return true;
  return first === 'rollback' && match[2]?.toLowerCase() !== 'to';
}

/** The error a transaction-control statement sent through `ctx.tx` gets. */
export function nestedTransactionError(): Error {
  return new Error(
    'SqliteStore: ctx.tx is already in the delivery transaction; do not BEGIN, COMMIT or ROLLBACK through it. ' +
      'Use SAVEPOINT (or better-sqlite3 transaction(), which nests as a savepoint) for nested work; the store commits.',
  );
}
