import type { WebhookErrorCode } from '@service-pay/core';

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
  | 'TABLE_MISSING';

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

/**
 * What the handler gets for a write sent through the client given to the store, beside `ctx.tx`, while a
 * delivery's transaction is open: that write would stay even when the delivery fails, and the sender's
 * retry would credit again. Code `WRITE_OUTSIDE_TRANSACTION`.
 *
 * @example
 * ```ts
 * if (error instanceof WriteOutsideTransactionError) console.error('queue the write on ctx.tx');
 * ```
 */
export class WriteOutsideTransactionError extends Error {
  /** Stable code for logs and tests (core's code table: answered 500, the delivery unrecorded). */
  readonly code = 'WRITE_OUTSIDE_TRANSACTION' satisfies WebhookErrorCode;
  /** The refused command, e.g. `PutItemCommand`. */
  readonly command: string;

  constructor(command: string) {
    super(
      `DynamoDbStore: onPaymentPaid sent ${command} through the client given to the store while the delivery's ` +
        'transaction is open. Queue the write on ctx.tx instead (ctx.tx.put / update / delete / conditionCheck): ' +
        'it commits in one TransactWriteItems with the dedupe record, or not at all. A write sent on its own ' +
        'stays even when the delivery fails, and the retry credits again. Reads are allowed. (A write that must ' +
        'survive a failed delivery: send it through another client instance.)',
    );
    this.name = 'WriteOutsideTransactionError';
    this.command = command;
  }
}
