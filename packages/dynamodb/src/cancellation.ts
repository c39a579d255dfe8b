import { type CancellationReason, DynamoDbStoreError, type DynamoDbStoreErrorCode } from './errors.js';

// The messages two cancellation reasons each share.
function throttled(at: string): string {
  return `DynamoDB throttled the transaction${at}; nothing was written.`;
}

function cancelled(at: string): string {
  return `DynamoDB cancelled the transaction${at}; nothing was written.`;
}

function refused(at: string): string {
  return `DynamoDB refused a write${at}; nothing was written.`;
}

/** How a cancellation reason of a `ctx.tx` write is coded, and its message (`at` names the write). */
const CANCELLATIONS: Record<string, readonly [DynamoDbStoreErrorCode, (at: string) => string]> = {
  ConditionalCheckFailed: [
    'TRANSACTION_CONDITION_FAILED',
    (at) => `a condition of the handler's writes failed${at}; nothing was written.`,
  ],
  TransactionConflict: [
    'TRANSACTION_CONFLICT',
    (at) => `another request was writing the same item${at}; nothing was written, the retry runs it again.`,
  ],
  ThrottlingError: ['TRANSACTION_THROTTLED', throttled],
  ProvisionedThroughputExceeded: ['TRANSACTION_THROTTLED', throttled],
  ValidationError: ['TRANSACTION_INVALID', refused],
  ItemCollectionSizeLimitExceeded: ['TRANSACTION_INVALID', refused],
};

/**
 * A failed commit, coded: DynamoDB's `TransactionCanceledException` says per item why (`None` for the
 * items that were fine); the dedupe record is the last item, so its condition failing means the lease was
 * lost. Any other error is returned as it is.
 */
export function explainCommitFailure(error: unknown, recordIndex: number): unknown {
  const name = (error as { name?: string } | null)?.name;
  if (name === 'ValidationException') {
    return new DynamoDbStoreError(
      'TRANSACTION_INVALID',
      `DynamoDB refused the transaction: ${(error as Error).message}`,
      {
        cause: error,
      },
    );
  }
  if (name !== 'TransactionCanceledException') return error;
  const raw = (error as { CancellationReasons?: Array<{ Code?: string; Message?: string }> }).CancellationReasons ?? [];
  const reasons: CancellationReason[] = raw
    .map((r, index) => ({ index, code: r.Code ?? 'None', ...(r.Message === undefined ? {} : { message: r.Message }) }))
    .filter((r) => r.code !== 'None');
  const options = { cause: error, reasons };
  const record = reasons.find((r) => r.index === recordIndex);
  if (record?.code === 'ConditionalCheckFailed') {
    return new DynamoDbStoreError(
      'LEASE_LOST',
      "another attempt took the key while this one ran (its lease ran out): the handler's writes and the record " +
        'were cancelled together, nothing was written.',
      options,
    );
  }
  const first = reasons.find((r) => r.index !== recordIndex) ?? record;
  const at = first === undefined ? '' : ` (ctx.tx write #${first.index}${first.message ? `: ${first.message}` : ''})`;
  const [code, message] = CANCELLATIONS[first?.code ?? ''] ?? ['TRANSACTION_CANCELED', cancelled];
  return new DynamoDbStoreError(code, message(at), options);
}
