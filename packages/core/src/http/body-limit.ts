import { WebhookError } from '../errors/webhook-error.js';

/**
 * The one BODY_TOO_LARGE refusal, whoever notices first: Content-Length, a reader, the final size, or a
 * framework that reads the body itself (an adapter hands it to the core as its body reader's rejection).
 *
 * @example
 * ```ts
 * const request = { ...webhookRequest, rawBody: () => Promise.reject(bodyTooLarge(handle.maxBodyBytes)) };
 * ```
 */
export function bodyTooLarge(maxBytes: number): WebhookError {
  return new WebhookError('BODY_TOO_LARGE', `The body is over the ${maxBytes}-byte limit (maxBodyBytes).`);
}

/**
 * The one BODY_TIMEOUT refusal: the body was still arriving `timeoutMs` after the handler began to read it
 * (a slow or stalled client). The sender itself gives up after 5 s, so nothing legitimate is cut off.
 *
 * @example
 * ```ts
 * throw bodyTimeout(10_000);
 * ```
 */
export function bodyTimeout(timeoutMs: number): WebhookError {
  return new WebhookError(
    'BODY_TIMEOUT',
    `The body did not arrive within ${timeoutMs} ms (bodyTimeoutMs); the connection is closed.`,
  );
}

/** How long a body reader may take: the handler passes its `bodyTimeoutMs` to every reader it calls. */
export interface BodyReadLimits {
  timeoutMs: number;
}

/** Joins the chunks a reader collected; a single chunk is returned as it is, without a copy. */
export function concatBytes(chunks: readonly Uint8Array[], total: number): Uint8Array {
  if (chunks.length === 1) return chunks[0] as Uint8Array;
  const out = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}
