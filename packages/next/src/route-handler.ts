import { createFetchHandler, type DedupeStore, type HandlerOptions, type WebhookStore } from '@service-pay/core';

/**
 * Options of `createRouteHandler`: the core's handler options, unchanged.
 *
 * @example
 * ```ts
 * const options: RouteHandlerOptions = { secret: process.env.SERVICE_WEBHOOK_SECRET!, onPaymentPaid };
 * ```
 */
export type RouteHandlerOptions<S extends WebhookStore = DedupeStore> = HandlerOptions<S>;

/**
 * An App Router route handler: `(request) => Promise<Response>`.
 *
 * @example
 * ```ts
 * export const POST: RouteHandler = createRouteHandler({ secret, onPaymentPaid });
 * ```
 */
export type RouteHandler = (request: Request) => Promise<Response>;

/**
 * App Router handler for `export const POST` in `app/**\/route.ts`, on the Node.js runtime and on the Edge
 * runtime (where the core's Web Crypto build is picked by its export conditions). It verifies the delivery,
 * runs `onPaymentPaid` exactly once per payment and reads the body only up to `maxBodyBytes`.
 *
 * Options are checked when the handler is made, so a blank secret fails the deploy. The one exception is a
 * secret that is `undefined`: `next build` loads route modules, and a build often runs without the webhook
 * secret in its environment, so then the options are checked on the first request instead.
 *
 * @example
 * ```ts
 * // app/api/webhooks/service/route.ts
 * import { createRouteHandler } from '@service-pay/next';
 *
 * export const POST = createRouteHandler({
 *   secret: process.env.SERVICE_WEBHOOK_SECRET!,
 *   onPaymentPaid: async (event) => orders.credit(event.orderNo, event.paymentId),
 * });
 * ```
 */
export function createRouteHandler<S extends WebhookStore = DedupeStore>(
  options: RouteHandlerOptions<S>,
): RouteHandler {
  let handle: RouteHandler | undefined = options?.secret === undefined ? undefined : createFetchHandler(options);
  return (request) => {
    try {
      handle ??= createFetchHandler(options);
    } catch (error) {
      return Promise.reject(error);
    }
    return handle(request);
  };
}
