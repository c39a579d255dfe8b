import { createHash, createHmac } from 'node:crypto';

/** The scheme word of the `Authorization` header (spec 5.1). */
export const AUTH_SCHEME = 'Service-HMAC-SHA256';

/**
 * A request body as signing and verification take it: the exact bytes, or text taken as its UTF-8 bytes.
 *
 * @example
 * ```ts
 * const body: RequestBody = JSON.stringify({ orderNo: 'o-1' });
 * ```
 */
export type RequestBody = string | Uint8Array;

/**
 * The signed text of spec 5.1: timestamp, uppercase method, path without query, and the SHA-256 hex of
 * the raw body bytes (of the empty string when there is no body), joined by `\n`.
 */
export function apiStringToSign(
  timestamp: string,
  method: string,
  path: string,
  body: RequestBody | undefined,
): string {
  const hash = createHash('sha256');
  if (typeof body === 'string') hash.update(body, 'utf8');
  else if (body !== undefined) hash.update(body);
  return `${timestamp}\n${method}\n${path}\n${hash.digest('hex')}`;
}

/** HMAC-SHA256 keyed with the API secret over the signed text, lowercase hex. */
export function apiSignatureHex(apiSecret: string, stringToSign: string): string {
  return createHmac('sha256', apiSecret).update(stringToSign, 'utf8').digest('hex');
}

/** The path as signed: the query string and fragment are not part of it (spec 5.1 rule 3). */
export function signedPath(path: string): string {
  const end = path.search(/[?#]/);
  return end === -1 ? path : path.slice(0, end);
}
