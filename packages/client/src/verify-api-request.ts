import { randomBytes, timingSafeEqual } from 'node:crypto';
import { AUTH_SCHEME, apiSignatureHex, apiStringToSign, type RequestBody, signedPath } from './api-signature.js';
import { describe } from './describe-value.js';
import { ServiceApiError, ServiceInputError } from './errors.js';

/**
 * A merchant API request as a server sees it.
 *
 * @example
 * ```ts
 * const request: ApiRequest = { method: req.method!, path: req.url!, headers: req.headers, rawBody: buffer };
 * ```
 */
export interface ApiRequest {
  method: string;
  /** The request target's path; a query string is allowed and ignored, as in signing. */
  path: string;
  /** A fetch `Headers` or a record such as Node's `req.headers`; lookup is case-insensitive. */
  headers: Headers | Readonly<Record<string, string | readonly string[] | undefined>>;
  /** The exact body bytes received; omit or pass `''` for none. */
  rawBody?: RequestBody | undefined;
}

/**
 * Options of `verifyApiRequest`.
 *
 * @example
 * ```ts
 * const options: VerifyApiRequestOptions = { getApiSecret: (apiKey) => merchants.get(apiKey)?.apiSecret };
 * ```
 */
export interface VerifyApiRequestOptions {
  /** The API secret of a key; `undefined` for an unknown key. */
  getApiSecret: (apiKey: string) => string | undefined | Promise<string | undefined>;
  /** Allowed clock difference in either direction, in seconds. Default 300 (spec 5.1). */
  toleranceSec?: number | undefined;
  /** The server clock in milliseconds. Default `Date.now`. */
  now?: (() => number) | undefined;
}

/**
 * What a verified request proves.
 *
 * @example
 * ```ts
 * const { apiKey }: VerifiedApiRequest = await verifyApiRequest(request, options);
 * ```
 */
export interface VerifiedApiRequest {
  /** The merchant that signed the request. */
  apiKey: string;
  /** The signed Unix seconds. */
  timestamp: number;
}

const SIGNATURE = /^[0-9a-fA-F]{64}$/;
const DIGITS = /^\d{1,15}$/;
const EXPECTED_FORM = `"${AUTH_SCHEME} ApiKey=<key>,Timestamp=<unix seconds>,Signature=<hex>"`;

/**
 * The server side of spec 5.1: checks the `Authorization` header of a merchant API request against the
 * method, path and raw body received. Resolves with the merchant's key; a missing or malformed header, an
 * unknown key, a wrong signature or a timestamp outside the window (checked after the signature, in both
 * directions) rejects with `ServiceApiError` status 401, code `UNAUTHORIZED`, and a message saying which,
 * except that an unknown key and a wrong signature are answered alike (same message, same HMAC work), so
 * the answer tells no one which keys exist. Signatures are compared in constant time.
 *
 * @example
 * ```ts
 * import { ServiceApiError, verifyApiRequest } from '@service-pay/client';
 *
 * try {
 *   const { apiKey } = await verifyApiRequest(
 *     { method: req.method, path: req.url, headers: req.headers, rawBody },
 *     { getApiSecret: (key) => secrets.get(key) },
 *   );
 * } catch (err) {
 *   if (!(err instanceof ServiceApiError)) throw err;
 *   res.writeHead(err.status, { 'content-type': 'application/json' });
 *   res.end(JSON.stringify({ error: err.code, message: err.message }));
 * }
 * ```
 */
export async function verifyApiRequest(
  request: ApiRequest,
  options: VerifyApiRequestOptions,
): Promise<VerifiedApiRequest> {
  if (typeof options?.getApiSecret !== 'function') {
    throw new ServiceInputError(
      'INVALID_OPTIONS',
      'verifyApiRequest needs a getApiSecret(apiKey) function.',
      'getApiSecret',
    );
  }
  const toleranceSec = options.toleranceSec ?? 300;
  if (!(Number.isFinite(toleranceSec) && toleranceSec >= 0)) {
    throw new ServiceInputError(
      'INVALID_OPTIONS',
      `toleranceSec must be a number >= 0, got ${describe(toleranceSec)}.`,
      'toleranceSec',
    );
  }
  if (
    request === null ||
    typeof request !== 'object' ||
    typeof request.method !== 'string' ||
    typeof request.path !== 'string'
  ) {
    throw new ServiceInputError('INVALID_OPTIONS', 'verifyApiRequest needs { method, path, headers, rawBody? }.');
  }

  const header = authorizationOf(request.headers);
  const { apiKey, timestamp, signature } = parseAuthorization(header);
  const apiSecret = await options.getApiSecret(apiKey);
  const known = typeof apiSecret === 'string' && apiSecret.length > 0;
  // An unknown key costs the same HMAC and gets the same answer as a wrong signature: otherwise the
  // answer (or its timing) would tell a stranger which ApiKeys exist.
  const expected = apiSignatureHex(
    known ? apiSecret : DECOY_SECRET,
    apiStringToSign(timestamp, request.method.toUpperCase(), signedPath(request.path), request.rawBody),
  );
  const matches = timingSafeEqual(Buffer.from(expected, 'hex'), Buffer.from(signature, 'hex'));
  if (!matches || !known) {
    throw unauthorized(
      'Signature does not match, or the ApiKey is unknown. Sign "<timestamp>\\n<METHOD>\\n<path without query>\\n<sha256 hex of the exact body bytes>" with HMAC-SHA256 and the API secret of that ApiKey.',
    );
  }
  const seconds = Number(timestamp);
  const nowSec = (options.now ?? Date.now)() / 1000;
  if (Math.abs(nowSec - seconds) > toleranceSec) {
    throw unauthorized(
      `Timestamp is outside the allowed window of ${toleranceSec} s around the server time; check the client clock.`,
    );
  }
  return { apiKey, timestamp: seconds };
}

/** The key an unknown ApiKey's signature is checked with: random per process, so nothing can match it. */
const DECOY_SECRET = randomBytes(32).toString('hex');

function unauthorized(message: string): ServiceApiError {
  return new ServiceApiError(401, 'UNAUTHORIZED', message);
}

function authorizationOf(headers: ApiRequest['headers']): string {
  let value: unknown;
  if (headers !== null && typeof headers === 'object' && typeof (headers as Headers).get === 'function') {
    value = (headers as Headers).get('authorization') ?? undefined;
  } else if (headers !== null && typeof headers === 'object') {
    const record = headers as Readonly<Record<string, unknown>>;
    value = record.authorization;
    if (value === undefined) {
      for (const key of Object.keys(record)) if (key.toLowerCase() === 'authorization') value = record[key];
    }
  }
  if (Array.isArray(value)) {
    if (value.length !== 1)
      throw unauthorized(`The Authorization header was sent ${value.length} times; send it exactly once.`);
    value = value[0];
  }
  if (typeof value !== 'string' || value.trim() === '')
    throw unauthorized(`Missing Authorization header; expected ${EXPECTED_FORM}.`);
  return value;
}

function parseAuthorization(header: string): { apiKey: string; timestamp: string; signature: string } {
  const trimmed = header.trim();
  const space = trimmed.indexOf(' ');
  const scheme = space === -1 ? trimmed : trimmed.slice(0, space);
  if (scheme !== AUTH_SCHEME)
    throw unauthorized(`Authorization scheme must be "${AUTH_SCHEME}"; expected ${EXPECTED_FORM}.`);
  const params = new Map<string, string>();
  for (const part of trimmed.slice(space + 1).split(',')) {
    const eq = part.indexOf('=');
    const name = part.slice(0, eq).trim();
    if (eq === -1 || params.has(name)) throw unauthorized(`Malformed Authorization header; expected ${EXPECTED_FORM}.`);
    params.set(name, part.slice(eq + 1).trim());
  }
  const apiKey = params.get('ApiKey');
  const timestamp = params.get('Timestamp');
  const signature = params.get('Signature');
  if (params.size !== 3 || !apiKey || timestamp === undefined || signature === undefined) {
    throw unauthorized(`Malformed Authorization header; expected ${EXPECTED_FORM}.`);
  }
  if (!DIGITS.test(timestamp))
    throw unauthorized('Malformed Authorization header: Timestamp must be Unix seconds (digits).');
  if (!SIGNATURE.test(signature))
    throw unauthorized('Malformed Authorization header: Signature must be 64 hex digits.');
  return { apiKey, timestamp, signature };
}
