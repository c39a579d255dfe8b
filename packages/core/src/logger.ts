/**
 * Where the pipeline reports what a merchant must know: conflicts (alerts), rejected payments, credits
 * whose completion could not be recorded, slow handlers. Pino-style `(fields, message)`, so Fastify's
 * `request.log` and pino loggers fit directly.
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

/** Warnings and errors to the console; quiet otherwise. */
export const consoleLogger: WebhookLogger = {
  warn: (fields, message) => console.warn(`[service-pay] ${message}`, fields),
  error: (fields, message) => console.error(`[service-pay] ${message}`, fields),
};
