import type { WebhookError } from '../errors/webhook-error.js';

/**
 * What the handler answers, framework-neutral. Adapters copy it onto their response unchanged.
 *
 * @example
 * ```ts
 * const { status, headers, body }: WebhookResponse = await handle({ method, rawBody, headers: req.headers });
 * res.writeHead(status, headers).end(body);
 * ```
 */
export interface WebhookResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

// Content-Type only: an answer to a POST is cacheable only with explicit freshness and a Content-Location
// (RFC 9110 section 9.3.3), which these never carry, and each further header is written by every adapter
// on every delivery.
export function jsonResponse(status: number, body: string, extraHeaders?: Record<string, string>): WebhookResponse {
  const headers: Record<string, string> = { 'content-type': 'application/json; charset=utf-8' };
  if (extraHeaders !== undefined) Object.assign(headers, extraHeaders);
  return { status, headers, body };
}

/** Spec section 7 error body: `{"error": CODE, "message": "..."}`, with the code's status. */
export function errorResponse(error: WebhookError, extraHeaders?: Record<string, string>): WebhookResponse {
  return jsonResponse(error.status, JSON.stringify({ error: error.code, message: error.message }), extraHeaders);
}

/**
 * The 200 answers, made once and frozen: most deliveries get one of these, and building a response and
 * its headers object per delivery was measurable. Adapters only read them.
 */
const answer200 = (body: string): WebhookResponse =>
  Object.freeze({
    status: 200,
    headers: Object.freeze({ 'content-type': 'application/json; charset=utf-8' }) as Record<string, string>,
    body,
  });
export const RECEIVED = answer200('{"received":true}');
export const DUPLICATE = answer200('{"received":true,"duplicate":true}');
export const REJECTED = answer200('{"received":true,"rejected":true}');
export const IGNORED = answer200('{"received":true,"ignored":true}');
