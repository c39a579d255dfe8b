import { createWebhookHandler, type HandlerOptions, WebhookError } from '@service-pay/core';

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

// Said in the RAW_BODY_UNAVAILABLE answer when the route read the body before handing the request over.
const FIX =
  'Pass the request to the handler before reading it (no request.json(), request.text() or request.formData() first); the handler needs the untouched body.';

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
  let handle: ReturnType<typeof createWebhookHandler> | undefined;
  return async (request) => {
    handle ??= createWebhookHandler(options);
    const { status, headers, body } = await handle({
      method: request.method,
      headers: request.headers,
      rawBody: (maxBytes) => readBody(request, maxBytes),
    });
    return new Response(body, { status, headers });
  };
}

/**
 * The core's `readLimited` with two differences it lacks today: a body already read is RAW_BODY_UNAVAILABLE
 * (not an empty body that fails as a bad signature), and `cancel()` is not awaited, because on Next.js's Edge
 * runtime it never settles and the 413 would never be sent.
 */
async function readBody(request: Request, maxBytes: number): Promise<Uint8Array> {
  if (request.bodyUsed)
    throw new WebhookError('RAW_BODY_UNAVAILABLE', `The body was already read before this handler ran. ${FIX}`);
  if (request.body === null) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      reader.cancel().catch(() => {});
      throw new WebhookError('BODY_TOO_LARGE', `The body is over the ${maxBytes}-byte limit (maxBodyBytes).`);
    }
    chunks.push(value);
  }
  if (chunks.length === 1) return chunks[0] as Uint8Array;
  const out = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}
