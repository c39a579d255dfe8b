import { AUTH_SCHEME, apiSignatureHex, apiStringToSign, type RequestBody, signedPath } from './api-signature.js';
import { describe } from './describe-value.js';
import { ServiceInputError } from './errors.js';

/**
 * Input of `signApiRequest`.
 *
 * @example
 * ```ts
 * const input: SignApiRequestInput = { method: 'GET', path: '/v1/payments/p_1', apiKey: 'ak_1', apiSecret: 'secret' };
 * ```
 */
export interface SignApiRequestInput {
  /** HTTP method; upper-cased before signing. */
  method: string;
  /** URL path with its leading `/`, such as `/v1/payments`. A query string is dropped before signing. */
  path: string;
  /** The exact body bytes sent (text is taken as UTF-8). Omit for a request without a body. */
  body?: RequestBody | undefined;
  apiKey: string;
  apiSecret: string;
  /** Unix seconds. Default: now. */
  timestamp?: number | undefined;
}

// ApiKey is written into a comma- and equals-separated header, so those characters cannot appear in it.
const API_KEY = /^[\x21-\x2b\x2d-\x3c\x3e-\x7e]{1,256}$/;
const METHOD = /^[A-Za-z]{1,16}$/;

/**
 * Computes the `Authorization` header value of a merchant API request, exactly per spec 5.1:
 * `Service-HMAC-SHA256 ApiKey=<key>,Timestamp=<unix seconds>,Signature=<hex>`, where the signature is
 * HMAC-SHA256 with the API secret over `timestamp\nMETHOD\npath\nsha256hex(body)`. Sign the exact bytes you
 * send: serialize the body once, then sign and send that same string.
 *
 * @example
 * ```ts
 * import { signApiRequest } from '@service-pay/client';
 *
 * const body = JSON.stringify({ orderNo: 'o-1', tokenSymbol: 'USDT', amount: '5', expireSec: 900, notifyUrl });
 * const authorization = signApiRequest({ method: 'POST', path: '/v1/payments', body, apiKey, apiSecret });
 * await fetch(`${baseUrl}/v1/payments`, {
 *   method: 'POST',
 *   headers: { 'content-type': 'application/json', authorization },
 *   body,
 * });
 * ```
 */
export function signApiRequest(input: SignApiRequestInput): string {
  if (input === null || typeof input !== 'object') {
    throw new ServiceInputError('INVALID_OPTIONS', `signApiRequest needs an input object, got ${describe(input)}.`);
  }
  const { method, path, body, apiKey, apiSecret } = input;
  if (typeof method !== 'string' || !METHOD.test(method)) {
    throw new ServiceInputError(
      'INVALID_OPTIONS',
      `method must be an HTTP method such as "POST", got ${describe(method)}.`,
      'method',
    );
  }
  if (typeof path !== 'string' || !path.startsWith('/')) {
    throw new ServiceInputError(
      'INVALID_OPTIONS',
      `path must start with "/", such as "/v1/payments", got ${describe(path)}.`,
      'path',
    );
  }
  if (body !== undefined && typeof body !== 'string' && !(body instanceof Uint8Array)) {
    throw new ServiceInputError(
      'INVALID_OPTIONS',
      `body must be a string or a Uint8Array of the exact bytes sent, got ${describe(body)}.`,
      'body',
    );
  }
  if (typeof apiKey !== 'string' || !API_KEY.test(apiKey)) {
    throw new ServiceInputError(
      'INVALID_OPTIONS',
      'apiKey must be a non-empty string of printable characters without spaces, commas or "=".',
      'apiKey',
    );
  }
  if (typeof apiSecret !== 'string' || apiSecret.length === 0) {
    throw new ServiceInputError('INVALID_OPTIONS', 'apiSecret must be a non-empty string.', 'apiSecret');
  }
  const timestamp = input.timestamp ?? Math.floor(Date.now() / 1000);
  if (!Number.isSafeInteger(timestamp) || timestamp < 0) {
    throw new ServiceInputError(
      'INVALID_OPTIONS',
      `timestamp must be whole Unix seconds, got ${describe(timestamp)}.`,
      'timestamp',
    );
  }
  const t = String(timestamp);
  const signature = apiSignatureHex(apiSecret, apiStringToSign(t, method.toUpperCase(), signedPath(path), body));
  return `${AUTH_SCHEME} ApiKey=${apiKey},Timestamp=${t},Signature=${signature}`;
}
