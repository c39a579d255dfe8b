import type { WebhookErrorCode } from '../errors/error-codes.js';
import { WebhookError } from '../errors/webhook-error.js';
import { DUPLICATE, errorResponse, IGNORED, RECEIVED, REJECTED, type WebhookResponse } from '../http/response.js';
import type { AttemptResult } from './attempt.js';

/**
 * 401s answer one fixed message per code: the caller may be anyone, and what a 401 message could say
 * (which secret looks wrong, what the body looked like) is for the merchant's logs only.
 */
const UNAUTHORIZED_ANSWERS: Partial<Record<WebhookErrorCode, WebhookResponse>> = Object.fromEntries(
  (
    [
      ['MISSING_SIGNATURE', 'No X-Service-Signature header.'],
      ['MALFORMED_SIGNATURE', 'X-Service-Signature is malformed.'],
      ['SIGNATURE_MISMATCH', 'No signature in X-Service-Signature matches.'],
      ['TIMESTAMP_OUT_OF_TOLERANCE', 'The signature timestamp is outside the allowed window.'],
    ] as const
  ).map(([code, message]) => [code, errorResponse(new WebhookError(code, message))]),
);

/** How long a sender should wait before retrying when the store is down. */
const STORE_RETRY_AFTER_SEC = '2';

/**
 * The answer to an exactly-once attempt: 200 for everything the sender must not retry (credited,
 * duplicate, rejected), a retryable status for the rest. `Retry-After` on a 409 is the time left on the
 * lease in seconds, at least 1 and at most `leaseMs`.
 */
export function answerFor(result: AttemptResult, leaseMs: number): WebhookResponse {
  switch (result.outcome) {
    case 'credited':
      return RECEIVED;
    case 'duplicate':
      return DUPLICATE;
    case 'rejected':
      return REJECTED;
    case 'in-progress': {
      const ms = Math.min(Math.max(result.retryAfterMs, 1), leaseMs);
      return errorResponse(
        new WebhookError('DELIVERY_IN_PROGRESS', 'Another delivery of this payment is being handled; retry later.'),
        { 'retry-after': String(Math.max(1, Math.ceil(ms / 1000))) },
      );
    }
    case 'conflict':
      return errorResponse(
        new WebhookError(
          'PAYLOAD_CONFLICT',
          'This payment was already seen with different payment fields; not handled.',
        ),
      );
    case 'failed':
      return errorResponse(
        result.code === 'COMMIT_FAILED'
          ? new WebhookError('COMMIT_FAILED', 'The payment could not be committed; nothing was credited. Retry later.')
          : new WebhookError('HANDLER_FAILED', 'The payment handler failed; the delivery will be retried.'),
      );
    case 'timeout':
      return errorResponse(
        new WebhookError('HANDLER_TIMEOUT', 'The payment handler did not finish in time; retry later.'),
      );
    case 'unavailable':
      return errorResponse(new WebhookError('STORE_UNAVAILABLE', 'The dedupe store is unavailable; retry later.'), {
        'retry-after': STORE_RETRY_AFTER_SEC,
      });
  }
}

/**
 * The answer to a request refused before its claim. An authentic event of another type is acknowledged
 * (200) so the sender does not retry it; a body over the limit closes the connection, so the rest of the
 * upload is neither read nor buffered.
 */
export function refusalAnswer(error: WebhookError): WebhookResponse {
  if (error.code === 'UNSUPPORTED_EVENT') return IGNORED;
  const fixed = UNAUTHORIZED_ANSWERS[error.code];
  if (fixed !== undefined) return fixed;
  if (error.code === 'METHOD_NOT_ALLOWED') return errorResponse(error, { allow: 'POST' });
  // Both close the connection: the rest of an oversized or stalled upload is neither read nor waited for.
  if (error.code === 'BODY_TOO_LARGE' || error.code === 'BODY_TIMEOUT')
    return errorResponse(error, { connection: 'close' });
  return errorResponse(error);
}

/** The answer to something nobody expected: 500, so the sender retries. */
export const UNEXPECTED_ANSWER: WebhookResponse = errorResponse(
  new WebhookError('INTERNAL_ERROR', 'Unexpected error; the delivery will be retried.'),
);
