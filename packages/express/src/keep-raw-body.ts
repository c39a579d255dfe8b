import type { IncomingMessage } from 'node:http';

/**
 * A `verify` hook for `express.json()` that keeps the exact bytes as `req.rawBody`, where the webhook
 * middleware finds them. For apps where a global `express.json()` must run before the webhook route:
 * the parsed `req.body` cannot be verified (the signature covers the bytes as sent), the kept bytes can.
 * Typed for `express.json`'s `verify` option, so it passes a strict `tsc` where the usual inline
 * `req.rawBody = buf` does not (`rawBody` is not a property of Express's request type).
 *
 * @example
 * ```ts
 * import express from 'express';
 * import { keepRawBody, serviceWebhook } from '@service-pay/express';
 *
 * const app = express();
 * app.use(express.json({ verify: keepRawBody })); // must run first, for whatever reason
 * app.post('/webhooks/service', serviceWebhook({
 *   secret: process.env.SERVICE_WEBHOOK_SECRET!,
 *   onPaymentPaid: async (event) => console.log('credit order', event.orderNo),
 * }));
 * ```
 */
export function keepRawBody(req: IncomingMessage, _res: unknown, buf: Buffer): void {
  (req as IncomingMessage & { rawBody?: Buffer }).rawBody = buf;
}
