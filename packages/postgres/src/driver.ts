import type { TransactionClaim } from '@service-pay/core';
import { endedError as ended, nestedTransactionError as nested } from '@service-pay/sql';
import { endsPostgresTransaction, explainPostgresError } from '@service-pay/sql/postgres';

export { IN_PROGRESS_RETRY_MS, PRUNE_BATCH, pruneAge } from '@service-pay/sql';

/**
 * What `PostgresStore` and `PostgresJsStore` ask of a database flavour (node-postgres, PGlite,
 * postgres.js), which each drive the connection themselves. One file per flavour; the store itself only
 * checks options and picks one.
 */
export interface Driver<Tx> {
  begin(key: string, fingerprint: string): Promise<TransactionClaim<Tx>>;
  migrate(): Promise<void>;
  prune(olderThanMs: number): Promise<number>;
}

/** Statements that would end or restart the delivery's transaction from inside the handler. */
export const endsTransaction = endsPostgresTransaction;

/** The error a query through `ctx.tx` gets once its transaction has ended, naming `store`. */
export function endedError(store = 'PostgresStore'): Error {
  return ended(store);
}

/** The error a transaction-control statement sent through `ctx.tx` gets, naming `store`. */
export function nestedTransactionError(store = 'PostgresStore'): Error {
  return nested(store);
}

/** A missing inbox table is a setup mistake: say the fix instead of "relation does not exist". */
export function explainError(error: unknown, tableName: string, store = 'PostgresStore'): unknown {
  return explainPostgresError(error, tableName, store, true);
}
