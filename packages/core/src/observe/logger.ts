/**
 * Where the SDK reports what a merchant must know. Pino-style `(fields, message)`, so pino, Fastify's
 * `request.log` and `console` all fit as they are.
 *
 * Levels: refusals (401, 400, 405, 413, 415, ...) at warn, rate-limited per code; credits at info;
 * duplicates at debug; conflicts, rejections, timeouts and failed completions at error. A failing handler's
 * stack once per payment, its later failures one short line each (rate-limited). Fields always carry
 * `code` and `status` where there is one, and `paymentId` and `deliveryId` once known (the payment id only
 * after the signature passed); never the secret, a signature or the body.
 *
 * @example
 * ```ts
 * import pino from 'pino';
 * createWebhookHandler({ secret, onPaymentPaid, logger: pino() });
 * ```
 */
export interface WebhookLogger {
  debug?(fields: Record<string, unknown>, message: string): void;
  info?(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
}

/**
 * The default logger: warnings and errors to the console, quiet otherwise.
 *
 * @example
 * ```ts
 * consoleLogger.warn({ code: 'SIGNATURE_MISMATCH', status: 401 }, 'Refused a delivery');
 * ```
 */
export const consoleLogger: WebhookLogger = {
  warn: (fields, message) => console.warn(`[service-pay] ${message}`, fields),
  error: (fields, message) => console.error(`[service-pay] ${message}`, fields),
};

/** A log call that never throws into the pipeline: a broken logger must not change an answer. */
export function safeLog(
  logger: WebhookLogger,
  level: 'debug' | 'info' | 'warn' | 'error',
  fields: Record<string, unknown>,
  message: string,
): void {
  try {
    logger[level]?.(fields, message);
  } catch {
    // Nowhere left to report it.
  }
}
