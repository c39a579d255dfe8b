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
