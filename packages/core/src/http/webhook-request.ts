import { WebhookError } from '../errors/webhook-error.js';
import { HEADER, type HeadersInput, readHeader } from '../verify/headers.js';
import { type BodyReadLimits, bodyTooLarge } from './body-limit.js';

/** `bodyTimeoutMs` unless set: twice the sender's own 5 s answer limit. */
export const DEFAULT_BODY_TIMEOUT_MS = 10_000;

import { exceedsBytes, type RawBody, toRawBytes } from './raw-body.js';

/**
 * A webhook request as an adapter hands it over. `rawBody` is the exact bytes, or a reader that the
 * handler calls with the byte limit once method and headers have passed (so a GET or an oversized
 * Content-Length is answered without reading the body at all).
 *
 * @example
 * ```ts
 * const request: WebhookRequest = { method: 'POST', headers: req.headers, rawBody: (limit) => readBody(req, limit) };
 * ```
 */
export interface WebhookRequest {
  method: string;
  headers: HeadersInput;
  /**
   * The bytes, or a reader the handler calls with the byte limit and the time limit (`bodyTimeoutMs`): a
   * reader should stop at either and reject with `bodyTooLarge` / `bodyTimeout` (the built-in ones do).
   */
  rawBody: RawBody | ((maxBytes: number, limits?: BodyReadLimits) => Promise<RawBody>);
}

const JSON_CONTENT_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

/**
 * The first stage: method, content type and declared length are checked before the body is read, then
 * the body is read (never past `maxBytes`) and checked for size. Throws `WebhookError` for every refusal.
 * Synchronous when the adapter hands over bytes it already holds; a promise when the body must be read.
 */
export function receiveBody(
  request: WebhookRequest,
  maxBytes: number,
  limits: BodyReadLimits = { timeoutMs: DEFAULT_BODY_TIMEOUT_MS },
): Uint8Array | string | Promise<Uint8Array | string> {
  const method = (request as Partial<WebhookRequest> | null)?.method;
  if (method !== 'POST') {
    throw new WebhookError(
      'METHOD_NOT_ALLOWED',
      `Webhooks are delivered with POST, not ${String(method).slice(0, 16)}.`,
    );
  }
  const { headers } = request;
  const contentType = readHeader(headers, HEADER.contentType, 'UNSUPPORTED_MEDIA_TYPE');
  // The service sends exactly `application/json`; the RegExp covers parameters and `+json` types.
  if (contentType === undefined || (contentType !== 'application/json' && !JSON_CONTENT_TYPE.test(contentType))) {
    throw new WebhookError('UNSUPPORTED_MEDIA_TYPE', 'Webhooks are sent with Content-Type: application/json.');
  }
  const declaredLength = readHeader(headers, HEADER.contentLength, 'UNSUPPORTED_MEDIA_TYPE');
  if (declaredLength !== undefined && Number(declaredLength) > maxBytes) throw bodyTooLarge(maxBytes);
  const { rawBody } = request;
  if (typeof rawBody === 'function') return rawBody(maxBytes, limits).then((raw) => checkedBody(raw, maxBytes));
  return checkedBody(rawBody, maxBytes);
}

function checkedBody(raw: unknown, maxBytes: number): Uint8Array | string {
  const body = toRawBytes(raw);
  if (exceedsBytes(body, maxBytes)) throw bodyTooLarge(maxBytes);
  return body;
}
