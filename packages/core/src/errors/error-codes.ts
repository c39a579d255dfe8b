/**
 * The one table from error code to HTTP status. Every code the SDK uses is a key here, and
 * `WebhookErrorCode` is derived from it, so a code cannot exist without its status. Adapters never choose
 * a status: they forward the one this table gives.
 *
 * Choices where the spec is silent:
 * - `UNSUPPORTED_EVENT` is 200: the delivery is authentic, we just do not handle that event type, and any
 *   other status would make the sender retry it eight times for nothing.
 * - `CLIENT_DISCONNECTED` is 499 (the status nginx logs for a client that closed its request): it is never
 *   sent, since nobody is left to read it, but outcome hooks and logs get a number.
 * - `PAYMENT_READ_FAILED` (reconciliation only) is 502: the payment service's API did not answer usefully.
 * - `BODY_TIMEOUT` is 408: the body did not arrive within `bodyTimeoutMs`; the connection is closed with it.
 * - `INTERNAL_ERROR` is 500 for a failure of the library itself, outside `onPaymentPaid` (a bug): kept apart
 *   from `HANDLER_FAILED` so metrics never blame the merchant's handler for it.
 * - `WRITE_OUTSIDE_TRANSACTION` is 500: a transactional store refused a write the handler sent beside
 *   `ctx.tx` on the store's own client (it would outlive a failed delivery); the delivery fails unrecorded,
 *   and the error the handler got carries this code.
 * - `QUERY_NOT_AWAITED` is 500: the handler returned while a query it built through `ctx.tx` had never
 *   been awaited, on a client that sends a query only when it is awaited; committing would record the
 *   payment without that write, so the delivery fails unrecorded and the retry runs the handler again.
 * - `LATE_TX_USE` is 500 but never answered: `ctx.tx` was used after its delivery had ended (work the
 *   handler left running), so that write was not made, whatever the delivery was answered. It is logged at
 *   error and reported as the outcome `late-use`, naming the payment.
 *
 * @example
 * ```ts
 * import { STATUS_BY_CODE } from '@service-pay/core';
 *
 * STATUS_BY_CODE.DELIVERY_IN_PROGRESS; // 409
 * ```
 */
export const STATUS_BY_CODE = Object.freeze({
  METHOD_NOT_ALLOWED: 405,
  UNSUPPORTED_MEDIA_TYPE: 415,
  BODY_TOO_LARGE: 413,
  BODY_TIMEOUT: 408,
  RAW_BODY_UNAVAILABLE: 500,
  CLIENT_DISCONNECTED: 499,
  MISSING_SIGNATURE: 401,
  MALFORMED_SIGNATURE: 401,
  SIGNATURE_MISMATCH: 401,
  TIMESTAMP_OUT_OF_TOLERANCE: 401,
  INVALID_PAYLOAD: 400,
  EVENT_MISMATCH: 400,
  MISSING_DELIVERY_ID: 400,
  UNSUPPORTED_EVENT: 200,
  DELIVERY_IN_PROGRESS: 409,
  PAYLOAD_CONFLICT: 422,
  HANDLER_FAILED: 500,
  HANDLER_TIMEOUT: 500,
  COMMIT_FAILED: 500,
  STORE_UNAVAILABLE: 503,
  PAYMENT_READ_FAILED: 502,
  INVALID_OPTIONS: 500,
  WRITE_OUTSIDE_TRANSACTION: 500,
  QUERY_NOT_AWAITED: 500,
  LATE_TX_USE: 500,
  INTERNAL_ERROR: 500,
} as const);

/**
 * Every way a delivery can be refused or fail, as a stable machine-readable code: in response bodies
 * (`{"error": CODE}`), in logs (`fields.code`), in outcome hooks and in `WebhookError.code`, so a merchant
 * can alert on them without parsing messages.
 *
 * @example
 * ```ts
 * const code: WebhookErrorCode = 'SIGNATURE_MISMATCH';
 * ```
 */
export type WebhookErrorCode = keyof typeof STATUS_BY_CODE;
