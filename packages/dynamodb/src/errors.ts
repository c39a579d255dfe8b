/**
 * Every way the DynamoDB store refuses or fails, as a stable code:
 * - `TRANSACTION_TOO_LARGE`: the handler queued more writes than one `TransactWriteItems` takes (100 items,
 *   the dedupe record counted); refused before anything is sent.
 * - `DELIVERY_ENDED`: a write queued on `ctx.tx` after the delivery committed or rolled back (a handler past
 *   its deadline); it is not sent.
 * - `LEASE_LOST`: another attempt took the key while this one ran; the whole transaction was cancelled,
 *   nothing was written.
 * - `TRANSACTION_CONDITION_FAILED`: a condition of the handler's own writes failed; nothing was written.
 * - `TRANSACTION_CONFLICT`, `TRANSACTION_THROTTLED`: DynamoDB cancelled the transaction for another
 *   request on the same items, or for capacity; nothing was written and the sender's retry runs it again.
 * - `TRANSACTION_INVALID`: DynamoDB refused the transaction's shape (two writes to one item, a write to the
 *   dedupe record's own item, an item over 400 KB, ...).
 * - `TRANSACTION_CANCELED`: cancelled for a reason not listed above (see `reasons`).
 * - `TABLE_MISSING`: the store's table does not exist and was not created (auto-creation off, or denied).
 * - `UNGUARDED_CLIENT`: a transactional store was given a client built with `cacheMiddleware: true`,
 *   whose cached commands the write guard cannot reach.
 *
 * @example
 * ```ts
 * const code: DynamoDbStoreErrorCode = 'TRANSACTION_TOO_LARGE';
 * ```
 */
export type DynamoDbStoreErrorCode =
  | 'TRANSACTION_TOO_LARGE'
  | 'DELIVERY_ENDED'
  | 'LEASE_LOST'
  | 'TRANSACTION_CONDITION_FAILED'
  | 'TRANSACTION_CONFLICT'
  | 'TRANSACTION_THROTTLED'
  | 'TRANSACTION_INVALID'
  | 'TRANSACTION_CANCELED'
  | 'TABLE_MISSING'
  | 'UNGUARDED_CLIENT';

/**
 * One cancellation reason of a `TransactWriteItems`, as DynamoDB gave it, with the index of the write it
 * is about (the dedupe record is the last one).
 *
 * @example
 * ```ts
 * const reason: CancellationReason = { index: 0, code: 'ConditionalCheckFailed', message: 'The conditional request failed' };
 * ```
 */
export interface CancellationReason {
  index: number;
  code: string;
  message?: string;
}

/**
 * The error the DynamoDB store rejects with, coded (`code`), with the cancellation reasons when DynamoDB
 * cancelled a transaction and the SDK's error as `cause`.
 *
 * @example
 * ```ts
 * try { await session.commit(record); } catch (error) {
 *   if (error instanceof DynamoDbStoreError && error.code === 'LEASE_LOST') console.warn('another attempt ran');
 * }
 * ```
 */
export class DynamoDbStoreError extends Error {
  /** Stable code for logs and tests. */
  readonly code: DynamoDbStoreErrorCode;
  /** For a cancelled transaction: every write's reason that was not `None`. */
  readonly reasons: readonly CancellationReason[];

  constructor(
    code: DynamoDbStoreErrorCode,
    message: string,
    options: { cause?: unknown; reasons?: CancellationReason[] } = {},
  ) {
    super(`DynamoDbStore: ${message}`, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'DynamoDbStoreError';
    this.code = code;
    this.reasons = options.reasons ?? [];
  }
}
