/**
 * The error a statement through `ctx.tx` gets once its transaction has ended (committed, rolled back).
 *
 * @example
 * ```ts
 * throw endedError('KyselyStore');
 * ```
 */
export function endedError(store: string): Error {
  return new Error(
    `${store}: this delivery transaction has ended (committed, rolled back or past its deadline); ` +
      'ctx.tx cannot be used after onPaymentPaid returned or timed out.',
  );
}

/**
 * The error a transaction-control statement through `ctx.tx` gets: the store begins and ends the
 * delivery's transaction, and a COMMIT from the handler would commit the credit without the inbox row.
 *
 * @example
 * ```ts
 * throw nestedTransactionError('KyselyStore');
 * ```
 */
export function nestedTransactionError(store: string): Error {
  return new Error(
    `${store}: ctx.tx is already the delivery transaction; do not BEGIN, COMMIT or ROLLBACK through it ` +
      "(nor call an ORM's transaction() on it). Use SAVEPOINT for nested work; the store commits.",
  );
}

/**
 * The error a delivery fails with when a statement the handler sent through `ctx.tx` failed and the
 * handler went on (it caught the error) on a database where that ended the transaction (PostgreSQL after
 * any failed statement, MySQL after a deadlock, SQLite after a full disk): its COMMIT would commit nothing
 * of it, the credit and the inbox row gone, and the sender, answered 200, would never retry. Answered 500
 * instead, nothing recorded; the retry runs the handler again. `cause` is the database's refusal of the
 * check, or the error that ended the transaction.
 *
 * @example
 * ```ts
 * throw abortedTransactionError('DrizzleStore', refusal);
 * ```
 */
export function abortedTransactionError(store: string, cause: unknown): Error {
  return new Error(
    `${store}: a statement sent through ctx.tx failed during onPaymentPaid and the handler went on, but the ` +
      'database had ended the transaction with it (PostgreSQL aborts it on any failed statement, MySQL rolls ' +
      'it back on a deadlock, SQLite on a full disk): committing would record nothing. The delivery is ' +
      'answered 500 and the retry runs the handler again. Let such an error reach the pipeline; on PostgreSQL, a statement that may ' +
      'fail can run inside a SAVEPOINT and roll back to it.',
    { cause },
  );
}
