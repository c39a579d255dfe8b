import { bodyTooLarge, concatBytes } from './body-limit.js';
import { WebhookError } from './errors.js';
import { createWebhookHandler } from './handler.js';
import type { HandlerOptions } from './handler-options.js';

/**
 * The exactly-once webhook pipeline as a fetch-style `(Request) => Promise<Response>`: for Next.js App
 * Router routes, Hono, Bun.serve, Deno.serve, Cloudflare Workers and anything else built on the Fetch API.
 *
 * @example
 * ```ts
 * import { createFetchHandler } from '@service-pay/core';
 *
 * const handle = createFetchHandler({ secret: env.SERVICE_WEBHOOK_SECRET, onPaymentPaid });
 * export default { fetch: (request: Request) => handle(request) };
 * ```
 */
export function createFetchHandler(options: HandlerOptions): (request: Request) => Promise<Response> {
  const handle = createWebhookHandler(options);
  return async (request) => {
    const { status, headers, body } = await handle({
      method: request.method,
      headers: request.headers,
      rawBody: (maxBytes) => readLimited(request, maxBytes),
    });
    return new Response(body, { status, headers });
  };
}

/**
 * Reads a fetch body chunk by chunk and stops, cancelling the stream, as soon as it passes `maxBytes`. A
 * body someone already read is RAW_BODY_UNAVAILABLE, not an empty body that would fail as a bad signature.
 */
export async function readLimited(request: Request, maxBytes: number): Promise<Uint8Array> {
  if (request.bodyUsed) {
    throw new WebhookError(
      'RAW_BODY_UNAVAILABLE',
      'The request body was already read before the webhook handler got it. Hand the request over untouched: no request.json(), request.text() or request.formData() first.',
    );
  }
  if (request.body === null) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      // Not awaited: on some runtimes (Next.js's Edge) cancel() never settles, and the 413 must go out.
      reader.cancel().catch(() => {});
      throw bodyTooLarge(maxBytes);
    }
    chunks.push(value);
  }
  return concatBytes(chunks, total);
}
