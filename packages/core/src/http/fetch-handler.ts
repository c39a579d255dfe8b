import { WebhookError } from '../errors/webhook-error.js';
import { createWebhookHandler } from '../pipeline/create-webhook-handler.js';
import type { HandlerOptions } from '../pipeline/handler-options.js';
import type { DedupeStore } from '../store/dedupe-store.js';
import type { WebhookStore } from '../store/transactional-store.js';
import { type BodyReadLimits, bodyTimeout, bodyTooLarge, concatBytes } from './body-limit.js';
import { clientDisconnected } from './client-disconnected.js';

/**
 * The exactly-once webhook pipeline as a fetch-style `(Request) => Promise<Response>`: for Next.js App
 * Router routes, Hono, Bun.serve, Deno.serve, Cloudflare Workers and anything else built on the Fetch API.
 *
 * @example
 * ```ts
 * // A Cloudflare Worker whose secret is a binding, which arrives with each request: the handler is made on
 * // the first one. (With `import { env } from 'cloudflare:workers'` it can be made at module scope too.)
 * import { createFetchHandler } from '@service-pay/core';
 *
 * let handle: ((request: Request) => Promise<Response>) | undefined;
 * export default {
 *   fetch(request: Request, env: { SERVICE_WEBHOOK_SECRET: string }) {
 *     handle ??= createFetchHandler({
 *       secret: env.SERVICE_WEBHOOK_SECRET,
 *       onPaymentPaid: async (event) => console.log('credit order', event.orderNo, event.amount),
 *     });
 *     return handle(request);
 *   },
 * };
 * ```
 */
export function createFetchHandler<S extends WebhookStore = DedupeStore>(
  options: HandlerOptions<S>,
): (request: Request) => Promise<Response> {
  const handle = createWebhookHandler(options);
  return async (request) => {
    const { status, headers, body } = await handle({
      method: request.method,
      headers: request.headers,
      rawBody: (maxBytes, limits) => readLimited(request, maxBytes, limits),
    });
    return new Response(body, { status, headers });
  };
}

/**
 * Reads a fetch body chunk by chunk and stops, cancelling the stream, as soon as it passes `maxBytes` or
 * `limits.timeoutMs` (BODY_TIMEOUT). A body someone already read is RAW_BODY_UNAVAILABLE, not an empty body
 * that would fail as a bad signature.
 */
export async function readLimited(request: Request, maxBytes: number, limits?: BodyReadLimits): Promise<Uint8Array> {
  let reader: ReadableStreamDefaultReader<Uint8Array>;
  try {
    if (request.bodyUsed) {
      throw new WebhookError(
        'RAW_BODY_UNAVAILABLE',
        'The request body was already read before the webhook handler got it. Hand the request over untouched: no request.json(), request.text() or request.formData() first.',
      );
    }
    if (request.body === null) return new Uint8Array(0);
    reader = request.body.getReader();
  } catch (error) {
    if (error instanceof WebhookError) throw error;
    // A locked or disturbed stream (something holds a reader on it, or a framework's body getter threw): the
    // bytes are not ours to read, and the fix is the same as for a body read before.
    throw new WebhookError(
      'RAW_BODY_UNAVAILABLE',
      `The request body cannot be read (${(error as Error)?.message ?? String(error)}): something else is reading or has locked it. Hand the request over untouched, and do not let the framework parse the body of this route (in Elysia, take only { request }, not { body }).`,
      { cause: error },
    );
  }
  const chunks: Uint8Array[] = [];
  let total = 0;
  // The deadline races each read: one timer per body (made on the first read), cleared when it is complete.
  let timedOut: Promise<never> | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = () =>
    (timedOut ??= new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        // Rejected before the cancel: cancelling ends the pending read as "done", which must not win.
        reject(bodyTimeout(limits?.timeoutMs ?? 0));
        reader.cancel().catch(() => {});
      }, limits?.timeoutMs);
    }));
  try {
    for (;;) {
      let chunk: ReadableStreamReadResult<Uint8Array>;
      try {
        chunk = limits === undefined ? await reader.read() : await Promise.race([reader.read(), deadline()]);
      } catch (error) {
        if (error instanceof WebhookError) throw error;
        throw clientDisconnected(error);
      }
      const { done, value } = chunk;
      if (done) break;
      total += value.byteLength;
      if (total > maxBytes) {
        // Not awaited: on some runtimes (Next.js's Edge) cancel() never settles, and the 413 must go out.
        reader.cancel().catch(() => {});
        throw bodyTooLarge(maxBytes);
      }
      chunks.push(value);
    }
  } finally {
    clearTimeout(timer);
    timedOut?.catch(() => {}); // settled or not, nobody waits on it any more
  }
  return concatBytes(chunks, total);
}
