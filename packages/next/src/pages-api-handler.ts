import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  createFetchHandler,
  createWebhookHandler,
  type DedupeStore,
  type HandlerOptions,
  type WebhookStore,
} from '@service-pay/core';
import { toWebhookRequest } from '@service-pay/core/node';

/**
 * Options of `createPagesApiHandler`: the core's handler options, unchanged.
 *
 * @example
 * ```ts
 * const options: PagesApiHandlerOptions = { secret: process.env.SERVICE_WEBHOOK_SECRET!, onPaymentPaid };
 * ```
 */
export type PagesApiHandlerOptions<S extends WebhookStore = DedupeStore> = HandlerOptions<S>;

/**
 * A Pages Router API handler, typed on Node's request and response so it fits `NextApiHandler`.
 *
 * @example
 * ```ts
 * const handler: PagesApiHandler = createPagesApiHandler({ secret, onPaymentPaid });
 * ```
 */
export type PagesApiHandler = {
  (req: IncomingMessage & { body?: unknown }, res: ServerResponse): Promise<void>;
  /** A Pages API route with `export const config = { runtime: 'edge' }`: Next.js passes a `Request`. */
  (request: Request, event?: unknown): Promise<Response>;
};

// Said in the RAW_BODY_UNAVAILABLE answer when Next.js's body parser got to the body first.
const FIX =
  'Add `export const config = { api: { bodyParser: false } }` to this API route file, so Next.js leaves the raw body to the handler.';

/**
 * Pages Router handler for `pages/api/*`: verifies the delivery and runs `onPaymentPaid` exactly once per
 * payment. The route must turn Next.js's body parser off; if it is left on, every delivery is answered
 * RAW_BODY_UNAVAILABLE with that fix in the message.
 *
 * On the Edge runtime (`export const config = { runtime: 'edge' }`) Next.js calls the route with a `Request`
 * and expects a `Response`: the handler then answers through the core's fetch handler, and there is no
 * body parser to turn off.
 *
 * Options are checked when the handler is made (a blank secret throws), or on the first request when the
 * secret is `undefined`, as it often is while `next build` loads API route modules.
 *
 * @example
 * ```ts
 * // pages/api/webhooks/service.ts
 * import { createPagesApiHandler } from '@service-pay/next';
 *
 * export const config = { api: { bodyParser: false } };
 * export default createPagesApiHandler({
 *   secret: process.env.SERVICE_WEBHOOK_SECRET!,
 *   onPaymentPaid: async (event) => orders.credit(event.orderNo, event.paymentId),
 * });
 * ```
 */
export function createPagesApiHandler<S extends WebhookStore = DedupeStore>(
  options: PagesApiHandlerOptions<S>,
): PagesApiHandler {
  // Checked now (a blank secret fails the deploy), unless the secret is not in the environment yet, as
  // during `next build`: then on the first request.
  let handle = options?.secret === undefined ? undefined : createWebhookHandler(options);
  let handleFetch: ReturnType<typeof createFetchHandler> | undefined;
  async function pagesApiHandler(req: (IncomingMessage & { body?: unknown }) | Request, res?: unknown) {
    // Edge API route: a fetch Request in, a Response out (the second argument is Next.js's event, not a res).
    if (typeof Request !== 'undefined' && req instanceof Request) {
      handleFetch ??= createFetchHandler(options);
      return handleFetch(req);
    }
    handle ??= createWebhookHandler(options);
    const { status, headers, body } = await handle(toWebhookRequest(req as IncomingMessage, { fix: FIX }));
    const response = res as ServerResponse;
    // The client is gone (it reset the connection mid-body, or gave up waiting): nobody to answer.
    if (response.destroyed) return;
    response.writeHead(status, headers).end(body);
  }
  return pagesApiHandler as PagesApiHandler;
}
