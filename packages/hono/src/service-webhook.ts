import { createFetchHandler, type DedupeStore, type HandlerOptions, type WebhookStore } from '@service-pay/core';
import type { Context } from 'hono';

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
 * The route handler: any Hono `Context` in, the core's answer out as a `Response`.
 *
 * @example
 * ```ts
 * const handler: ServiceWebhookHandler = serviceWebhook({ secret, onPaymentPaid });
 * app.post('/webhooks/service', handler);
 * ```
 */
export type ServiceWebhookHandler = (c: Context) => Promise<Response>;

/**
 * Hono handler that verifies a payment service webhook and runs `onPaymentPaid` exactly once per payment,
 * on every runtime Hono runs on (Node through `@hono/node-server`, Bun, Deno, Cloudflare Workers). It hands
 * Hono's underlying `Request` to the core's fetch handler untouched, so the core reads the exact bytes
 * (stopping at `maxBodyBytes`) and decides every status. The options, secret included, are checked here,
 * when the app is built, not on the first delivery.
 *
 * Put no body-reading middleware or validator (`c.req.json()`, `validator('json', ...)`) in front of it:
 * a body already read is answered `500 RAW_BODY_UNAVAILABLE`.
 *
 * @example
 * ```ts
 * import { Hono } from 'hono';
 * import { serviceWebhook } from '@service-pay/hono';
 *
 * const app = new Hono();
 * app.post('/webhooks/service', serviceWebhook({
 *   secret: process.env.SERVICE_WEBHOOK_SECRET!,
 *   onPaymentPaid: async (event) => orders.credit(event.orderNo, event.paymentId),
 * }));
 * ```
 */
export function serviceWebhook<S extends WebhookStore = DedupeStore>(
  options: ServiceWebhookOptions<S>,
): ServiceWebhookHandler {
  const handle = createFetchHandler(options);
  return (c) => handle(c.req.raw);
}
