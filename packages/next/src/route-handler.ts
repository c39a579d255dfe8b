import { createFetchHandler, type HandlerOptions } from '@service-pay/core';

/**
 * Options of `createRouteHandler`: the core's handler options, unchanged.
 *
 * @example
 * ```ts
 * const options: RouteHandlerOptions = { secret: process.env.SERVICE_WEBHOOK_SECRET!, onPaymentPaid };
 * ```
 */
export type RouteHandlerOptions = HandlerOptions;

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
 * Options are checked on the first request rather than at import: `next build` loads route modules, and a
 * build often runs without the webhook secret in its environment.
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
export function createRouteHandler(options: RouteHandlerOptions): RouteHandler {
  let handle: RouteHandler | undefined;
  return (request) => {
    handle ??= createFetchHandler(options);
    return handle(request);
  };
}
