import type { TransactionClaim } from '@service-pay/core';
import { endedError as ended } from '@service-pay/sql';
import { explainSqliteError } from '@service-pay/sql/sqlite';

/**
 * What `SqliteStore` asks of a SQLite client (better-sqlite3, libsql). One file per client; the store
 * itself only checks options and picks one.
 */
export interface Driver<Tx> {
  begin(key: string, fingerprint: string): Promise<TransactionClaim<Tx>>;
  migrate(): Promise<void>;
  prune(olderThanMs: number): Promise<number>;
}

export { IN_PROGRESS_RETRY_MS, PRUNE_BATCH } from '@service-pay/sql';
export {
  endsSqliteTransaction as endsTransaction,
  isSqliteBusy as isBusy,
} from '@service-pay/sql/sqlite';

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

/** The error a transaction-control statement sent through `ctx.tx` gets. */
export function nestedTransactionError(): Error {
  return new Error(
    'SqliteStore: ctx.tx is already in the delivery transaction; do not BEGIN, COMMIT or ROLLBACK through it. ' +
      'Use SAVEPOINT (or better-sqlite3 transaction(), which nests as a savepoint) for nested work; the store commits.',
  );
}

/** The error a query through `ctx.tx` gets once its transaction has ended. */
export function endedError(): Error {
  return ended('SqliteStore');
}

/** A missing inbox table is a setup mistake: say the fix instead of "no such table". */
export function explainError(error: unknown, tableName: string): unknown {
  return explainSqliteError(error, tableName, 'SqliteStore', true);
}
