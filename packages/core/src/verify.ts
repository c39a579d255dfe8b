import { cryptoBackend } from '#crypto';
import { isVisibleAscii } from './ascii.js';
import { timingSafeEqualHex } from './crypto/timing-safe-equal-hex.js';
import { WebhookError } from './errors.js';
import { assertPaymentPaidEvent, PAYMENT_PAID, type PaymentPaidEvent } from './event.js';
import { HEADER, type HeadersInput, readHeader } from './headers.js';
import { type RawBody, toRawBytes } from './raw-body.js';
import { assertWellFormed, type ParsedSignatureHeader, parseSignatureHeader } from './signature-header.js';

/**
 * Options for `verifyWebhook`.
 *
 * @example
 * ```ts
 * const options: VerifyOptions = { secret: [process.env.WEBHOOK_SECRET!, process.env.OLD_WEBHOOK_SECRET!] };
 * ```
 */
export interface VerifyOptions {
  /** The webhook secret, or several during a rotation: a signature made with any of them passes. */
  secret: string | readonly string[];
  /** Largest allowed distance between `t` and now, in either direction, in seconds. Default 300. */
  toleranceSec?: number;
  /** Clock in milliseconds, for tests. Default `Date.now`. */
  now?: () => number;
}

/**
 * A delivery whose signature, timestamp and payload were all checked.
 *
 * @example
 * ```ts
 * const { event, deliveryId, timestamp }: VerifiedDelivery = await verifyWebhook(input, { secret });
 * ```
 */
export interface VerifiedDelivery {
  event: PaymentPaidEvent;
  /** `X-Service-Delivery`; unique per attempt, NOT covered by the signature (see the README). */
  deliveryId: string;
  /** The signed `t`, Unix seconds. */
  timestamp: number;
}

/** Options checked and defaulted once. */
export interface ResolvedVerifyOptions {
  secrets: readonly string[];
  toleranceSec: number;
  now: () => number;
}

export function resolveVerifyOptions(options: VerifyOptions): ResolvedVerifyOptions {
  if (options === null || typeof options !== 'object') {
    throw new WebhookError('INVALID_OPTIONS', 'Options are required: { secret }.');
  }
  const secrets = typeof options.secret === 'string' ? [options.secret] : options.secret;
  if (!Array.isArray(secrets) || secrets.length === 0 || !secrets.every((s) => typeof s === 'string' && s.length > 0)) {
    throw new WebhookError(
      'INVALID_OPTIONS',
      'options.secret must be the webhook secret (a non-empty string) or a non-empty array of them. Is the environment variable set?',
    );
  }
  const toleranceSec = options.toleranceSec ?? 300;
  if (!(Number.isFinite(toleranceSec) && toleranceSec > 0)) {
    throw new WebhookError('INVALID_OPTIONS', 'options.toleranceSec must be a positive number of seconds.');
  }
  const now = options.now ?? Date.now;
  if (typeof now !== 'function') throw new WebhookError('INVALID_OPTIONS', 'options.now must be a function.');
  return { secrets, toleranceSec, now };
}

// Messages may name an event type, but never echo arbitrary text (it could carry a signature or body data).
const EVENT_NAME = /^[a-z][a-z0-9_]{0,31}(?:\.[a-z0-9_]{1,32}){1,3}$/;
const quoteEventName = (name: string) =>
  EVENT_NAME.test(name) ? `"${name}"` : `(${name.length} characters, not an event name)`;

/** `/^dl_[\x21-\x7e]{1,253}$/`: the `dl_` prefix, then visible ASCII, 256 characters at most. */
const isDeliveryId = (v: string) => v.length > 3 && v.length <= 256 && v.startsWith('dl_') && isVisibleAscii(v, 3);

/**
 * Proves a delivery came from the payment service and returns its typed, validated `payment.paid` event.
 *
 * Checks, in order: the signature over the exact received bytes (`t` + `.` + body, HMAC-SHA256, constant
 * time, any configured secret), the timestamp within `toleranceSec` in both directions, then the JSON
 * payload against spec 2.3, `X-Service-Event` against the body, and a `dl_` delivery id. Rejects only with
 * a `WebhookError`; an authentic event of another type rejects with code `UNSUPPORTED_EVENT` (status 200).
 *
 * This does not deduplicate: use `createWebhookHandler` (or an adapter) for exactly-once handling.
 *
 * @example
 * ```ts
 * import { verifyWebhook } from '@service-pay/core';
 *
 * const { event, deliveryId } = await verifyWebhook(
 *   { rawBody: await request.arrayBuffer(), headers: request.headers },
 *   { secret: process.env.SERVICE_WEBHOOK_SECRET! },
 * );
 * console.log(`${event.paymentId} paid ${event.amount} ${event.tokenSymbol}`);
 * ```
 */
export async function verifyWebhook(
  input: { rawBody: RawBody; headers: HeadersInput },
  options: VerifyOptions,
): Promise<VerifiedDelivery> {
  return verifyResolved(input, resolveVerifyOptions(options));
}

/**
 * `verifyWebhook` with options resolved once by the caller (the handler's hot path). Synchronous when the
 * crypto backend is (node:crypto): it then returns the delivery or throws, and costs no promise at all;
 * with Web Crypto it returns a promise. Either way only `WebhookError` is thrown or rejected.
 */
export function verifyResolved(
  input: { rawBody: unknown; headers: HeadersInput },
  options: ResolvedVerifyOptions,
): VerifiedDelivery | Promise<VerifiedDelivery> {
  if (input === null || typeof input !== 'object' || input.headers === null || typeof input.headers !== 'object') {
    throw new WebhookError('MISSING_SIGNATURE', 'verifyWebhook needs { rawBody, headers }; headers were not given.');
  }
  const body = toRawBytes(input.rawBody);
  const { headers } = input;
  const header = parseSignatureHeader(readHeader(headers, HEADER.signature, 'MALFORMED_SIGNATURE'));
  const expected: Array<string | Promise<string>> = [];
  let pending = false;
  for (const secret of options.secrets) {
    const digest = cryptoBackend.signPayload(secret, header.timestampText, body);
    if (typeof digest !== 'string') pending = true;
    expected.push(digest);
  }
  if (!pending) return afterSignature(expected as string[], header, body, headers, options);
  return Promise.all(expected).then((hex) => afterSignature(hex, header, body, headers, options));
}

function afterSignature(
  expected: readonly string[],
  header: ParsedSignatureHeader,
  body: Uint8Array | string,
  headers: HeadersInput,
  options: ResolvedVerifyOptions,
): VerifiedDelivery {
  checkSignature(expected, header, options.secrets);

  const skewSec = Math.abs(options.now() / 1000 - header.timestamp);
  if (skewSec > options.toleranceSec) {
    throw new WebhookError(
      'TIMESTAMP_OUT_OF_TOLERANCE',
      `The signature timestamp is ${Math.round(skewSec)} s away from this server's clock (tolerance ${options.toleranceSec} s). Either this is a replay of an old delivery or this server's clock is wrong.`,
    );
  }

  const parsed = parseJsonObject(body);
  const eventType = parsed.event;
  if (typeof eventType !== 'string' || eventType.length === 0) {
    throw new WebhookError('INVALID_PAYLOAD', 'The payload has no "event" string.');
  }
  const headerEvent = readHeader(headers, HEADER.event, 'EVENT_MISMATCH');
  if (headerEvent !== eventType) {
    throw new WebhookError(
      'EVENT_MISMATCH',
      headerEvent === undefined
        ? 'No X-Service-Event header; it must equal the payload\'s "event".'
        : `X-Service-Event ${quoteEventName(headerEvent)} does not equal the payload's event ${quoteEventName(eventType)}.`,
    );
  }
  const deliveryId = readHeader(headers, HEADER.delivery, 'MISSING_DELIVERY_ID');
  if (deliveryId === undefined || !isDeliveryId(deliveryId)) {
    throw new WebhookError(
      'MISSING_DELIVERY_ID',
      deliveryId === undefined
        ? 'No X-Service-Delivery header.'
        : 'X-Service-Delivery must start with "dl_" and be at most 256 printable characters.',
    );
  }
  if (eventType !== PAYMENT_PAID) {
    throw new WebhookError(
      'UNSUPPORTED_EVENT',
      `Event type ${quoteEventName(eventType)} is not handled; acknowledged.`,
    );
  }
  assertPaymentPaidEvent(parsed);
  return { event: parsed, deliveryId, timestamp: header.timestamp };
}

/** Any received `v1` equal to the digest of any configured secret passes; each comparison is constant-time. */
function checkSignature(expected: readonly string[], header: ParsedSignatureHeader, secrets: readonly string[]): void {
  for (const digest of expected) {
    for (const candidate of header.signatures) {
      if (timingSafeEqualHex(digest, candidate)) return;
    }
  }
  assertWellFormed(header);
  let hint =
    " Check that the secret is this endpoint's webhook secret (not the API secret) and that the body is passed exactly as received, not re-serialized JSON.";
  if (secrets.some((s) => s !== s.trim())) {
    hint = ' The configured secret has leading or trailing whitespace: trim it (a newline from an env file is common).';
  }
  throw new WebhookError('SIGNATURE_MISMATCH', `No signature in X-Service-Signature matches.${hint}`);
}

function parseJsonObject(body: Uint8Array | string): Record<string, unknown> {
  const text = typeof body === 'string' ? body : cryptoBackend.decodeUtf8(body);
  if (text === undefined) throw new WebhookError('INVALID_PAYLOAD', 'The payload is not valid UTF-8.');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new WebhookError('INVALID_PAYLOAD', 'The payload is not valid JSON.');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new WebhookError('INVALID_PAYLOAD', 'The payload must be a JSON object.');
  }
  return parsed as Record<string, unknown>;
}
