import type { IncomingMessage, ServerResponse } from 'node:http';
import { createWebhookHandler, type HandlerOptions } from '@service-pay/core';
import { toWebhookRequest } from '@service-pay/core/node';

/**
 * Options of `createPagesApiHandler`: the core's handler options, unchanged.
 *
 * @example
 * ```ts
 * const options: PagesApiHandlerOptions = { secret: process.env.SERVICE_WEBHOOK_SECRET!, onPaymentPaid };
 * ```
 */
export type PagesApiHandlerOptions = HandlerOptions;

/**
 * A Pages Router API handler, typed on Node's request and response so it fits `NextApiHandler`.
 *
 * @example
 * ```ts
 * const handler: PagesApiHandler = createPagesApiHandler({ secret, onPaymentPaid });
 * ```
 */
export type PagesApiHandler = (req: IncomingMessage & { body?: unknown }, res: ServerResponse) => Promise<void>;

// Said in the RAW_BODY_UNAVAILABLE answer when Next.js's body parser got to the body first.
const FIX =
  'Add `export const config = { api: { bodyParser: false } }` to this API route file, so Next.js leaves the raw body to the handler.';

/**
 * Pages Router handler for `pages/api/*`: verifies the delivery and runs `onPaymentPaid` exactly once per
 * payment. The route must turn Next.js's body parser off; if it is left on, every delivery is answered
 * RAW_BODY_UNAVAILABLE with that fix in the message.
 *
 * Options are checked on the first request rather than at import, as `next build` loads API route modules.
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
export function createPagesApiHandler(options: PagesApiHandlerOptions): PagesApiHandler {
  let handle: ReturnType<typeof createWebhookHandler> | undefined;
  return async (req, res) => {
    handle ??= createWebhookHandler(options);
    const { status, headers, body } = await handle(toWebhookRequest(req, { fix: FIX }));
    res.writeHead(status, headers).end(body);
  };
}
