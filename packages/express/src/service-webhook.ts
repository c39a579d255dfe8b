import type { IncomingMessage, ServerResponse } from 'node:http';
import { createWebhookHandler, type DedupeStore, type HandlerOptions, type WebhookStore } from '@service-pay/core';
import { toWebhookRequest } from '@service-pay/core/node';

/**
 * Options of `serviceWebhook`: the core's handler options, unchanged.
 *
 * @example
 * ```ts
 * const options: ServiceWebhookOptions = { secret: process.env.SERVICE_WEBHOOK_SECRET!, onPaymentPaid };
 * ```
 */
export type ServiceWebhookOptions<S extends WebhookStore = DedupeStore> = HandlerOptions<S>;

/**
 * The middleware, typed on Node's own request and response so it fits Express 4 and 5 (and their
 * `@types/express` versions) alike.
 *
 * @example
 * ```ts
 * const middleware: ServiceWebhookMiddleware = serviceWebhook({ secret, onPaymentPaid });
 * ```
 */
export type ServiceWebhookMiddleware = (
  req: IncomingMessage & { body?: unknown; rawBody?: unknown },
  res: ServerResponse,
  next: (error?: unknown) => void,
) => void;

// Said in the RAW_BODY_UNAVAILABLE answer when express.json() (or similar) got to the body first. Both fixes
// hold whether that parser is global or on the route: an express.raw() on the route would not, since a
// global express.json() has already consumed the stream by then.
const FIX =
  'Register the webhook route before app.use(express.json()) and take any JSON parser off the route itself; or, where express.json() must run first, keep the exact bytes with its verify option: express.json({ verify: keepRawBody }), keepRawBody from @service-pay/express.';

/**
 * Express 4 and 5 middleware that verifies a payment service webhook and runs `onPaymentPaid` exactly once
 * per payment. It reads the raw body itself (stopping at `maxBodyBytes`), or takes the Buffer left by
 * `express.raw()` or a `req.rawBody`; every status comes from the core.
 *
 * @example
 * ```ts
 * import express from 'express';
 * import { serviceWebhook } from '@service-pay/express';
 *
 * const app = express();
 * app.post('/webhooks/service', serviceWebhook({
 *   secret: process.env.SERVICE_WEBHOOK_SECRET!,
 *   onPaymentPaid: async (event) => orders.credit(event.orderNo, event.paymentId),
 * }));
 * app.use(express.json()); // the rest of the app may parse JSON as usual
 * ```
 */
export function serviceWebhook<S extends WebhookStore = DedupeStore>(
  options: ServiceWebhookOptions<S>,
): ServiceWebhookMiddleware {
  const handle = createWebhookHandler(options);
  return (req, res, next) => {
    handle(toWebhookRequest(req, { fix: FIX }))
      .then(({ status, headers, body }) => {
        // The client is gone (it reset the connection mid-body, or gave up waiting): nobody to answer.
        if (res.destroyed) return;
        res.writeHead(status, headers).end(body);
      })
      // The core never rejects; this is a response that could not be written (e.g. headers already sent).
      .catch(next);
  };
}
