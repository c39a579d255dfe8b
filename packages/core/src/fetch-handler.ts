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

/** Reads a fetch body chunk by chunk and stops, cancelling the stream, as soon as it passes `maxBytes`. */
export async function readLimited(request: Request, maxBytes: number): Promise<Uint8Array> {
  if (request.body === null) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => {});
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
