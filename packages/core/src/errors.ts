/**
 * Every way a delivery can be refused, as a stable machine-readable code.
 *
 * Codes are part of the public contract: they appear in response bodies (`{"error": CODE}`), in logs and
 * in `WebhookError.code`, so a merchant can alert on them without parsing messages.
 */
export type WebhookErrorCode =
  | 'METHOD_NOT_ALLOWED'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'BODY_TOO_LARGE'
  | 'RAW_BODY_UNAVAILABLE'
  | 'MISSING_SIGNATURE'
  | 'MALFORMED_SIGNATURE'
  | 'SIGNATURE_MISMATCH'
  | 'TIMESTAMP_OUT_OF_TOLERANCE'
  | 'INVALID_PAYLOAD'
  | 'EVENT_MISMATCH'
  | 'MISSING_DELIVERY_ID'
  | 'UNSUPPORTED_EVENT'
  | 'DELIVERY_IN_PROGRESS'
  | 'PAYLOAD_CONFLICT'
  | 'HANDLER_FAILED'
  | 'STORE_UNAVAILABLE'
  | 'INVALID_OPTIONS';

/**
 * The one table from error code to HTTP status. Adapters never choose a status: they forward this one.
 *
 * `UNSUPPORTED_EVENT` is 200 on purpose: the delivery is authentic, we just do not handle that event type,
 * and any other status would make the sender retry it eight times for nothing.
 */
export const STATUS_BY_CODE: Readonly<Record<WebhookErrorCode, number>> = Object.freeze({
  METHOD_NOT_ALLOWED: 405,
  UNSUPPORTED_MEDIA_TYPE: 415,
  BODY_TOO_LARGE: 413,
  RAW_BODY_UNAVAILABLE: 500,
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
  STORE_UNAVAILABLE: 503,
  INVALID_OPTIONS: 500,
});

const WEBHOOK_ERROR = Symbol.for('@service-pay/core/WebhookError');
const PAYMENT_REJECTED = Symbol.for('@service-pay/core/PaymentRejectedError');

/**
 * The only error `verifyWebhook` ever throws, and the shape of every refusal the handler sends.
 *
 * Messages are written for the merchant's logs: they say what was wrong and how to fix it, and never
 * contain the secret, the signature or the body.
 *
 * @example
 * ```ts
 * try {
 *   const { event } = await verifyWebhook({ rawBody, headers }, { secret });
 * } catch (err) {
 *   if (err instanceof WebhookError) {
 *     res.status(err.status).json({ error: err.code, message: err.message });
 *   } else throw err;
 * }
 * ```
 */
export class WebhookError extends Error {
  // A brand instead of prototype identity: with both the ESM and CJS builds (or two installed copies)
  // loaded, `instanceof` must still recognise an error made by the other copy.
  static override [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[WEBHOOK_ERROR] === true;
  }
  override readonly name = 'WebhookError';
  /** Stable machine-readable reason. */
  readonly code: WebhookErrorCode;
  /** HTTP status that answers this error, from the one code-to-status table. */
  readonly status: number;

  constructor(code: WebhookErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.status = STATUS_BY_CODE[code];
  }
}

/**
 * Throw this from `onPaymentPaid` to reject a payment for good, for example when the paid amount or the
 * token does not match the order. The delivery is recorded as completed and answered with 200, so the
 * sender stops retrying something that can never succeed; the rejection is logged as an error.
 *
 * Any other error is treated as transient: the claim is released and the sender retries.
 *
 * @example
 * ```ts
 * onPaymentPaid: async (event) => {
 *   const order = await db.orders.find(event.orderNo);
 *   if (compareAmounts(event.amount, order.amount) !== 0) {
 *     throw new PaymentRejectedError(`paid ${event.amount}, order wants ${order.amount}`);
 *   }
 *   await db.credit(order, event.paymentId);
 * }
 * ```
 */
export class PaymentRejectedError extends Error {
  static override [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[PAYMENT_REJECTED] === true;
  }
  override readonly name = 'PaymentRejectedError';
  /** Why the payment was rejected, as given by the handler. */
  readonly reason: string;

  constructor(reason: string, options?: { cause?: unknown }) {
    super(reason, options);
    this.reason = reason;
  }
}

Object.defineProperty(WebhookError.prototype, WEBHOOK_ERROR, { value: true });
Object.defineProperty(PaymentRejectedError.prototype, PAYMENT_REJECTED, { value: true });
