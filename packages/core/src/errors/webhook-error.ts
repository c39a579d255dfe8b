import { brandErrorClass } from './brand.js';
import { STATUS_BY_CODE, type WebhookErrorCode } from './error-codes.js';

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
  override readonly name = 'WebhookError';
  /** Stable machine-readable reason. */
  readonly code: WebhookErrorCode;
  /** HTTP status that answers this error, from the one code-to-status table. */
  readonly status: number;
  /**
   * The likely fix, for the merchant's logs (also at the end of `message`), e.g. why a well-formed signature
   * did not match. Never sent to the caller: the handler answers a fixed message per code.
   */
  readonly hint: string | undefined;

  constructor(code: WebhookErrorCode, message: string, options?: { cause?: unknown; hint?: string }) {
    super(options?.hint === undefined ? message : `${message} ${options.hint}`, options);
    this.code = code;
    this.status = STATUS_BY_CODE[code];
    this.hint = options?.hint;
  }
}

brandErrorClass(WebhookError, 'WebhookError');
