import { cryptoBackend, type Digest } from '#crypto';
import { WebhookError } from '../errors/webhook-error.js';
import { assertPaymentPaidEvent, PAYMENT_PAID, type PaymentPaidEvent } from '../event/payment-paid-event.js';
import { type RawBody, toRawBytes } from '../http/raw-body.js';
import { HEADER, readHeader } from './headers.js';
import { type MismatchHints, mismatchHint } from './mismatch-hint.js';
import { resolvedOnce } from './resolved-options.js';
import { assertSignaturesAreHex, parseSignatureHeader, type SignatureHeader } from './signature-header.js';
import { type ResolvedVerifyOptions, readClock, type VerifyOptions } from './verify-options.js';

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

/**
 * What `verifyWebhook` reads: the exact body bytes and the request headers.
 *
 * @example
 * ```ts
 * const input: VerifyInput = { rawBody: await request.arrayBuffer(), headers: request.headers };
 * ```
 */
export interface VerifyInput {
  rawBody: RawBody;
  headers: unknown;
}

// Messages may name an event type, but never echo arbitrary text (it could carry a signature or body data).
const EVENT_NAME = /^[a-z][a-z0-9_]{0,31}(?:\.[a-z0-9_]{1,32}){1,3}$/;
const quoteEventName = (name: string) =>
  EVENT_NAME.test(name) ? `"${name}"` : `(${name.length} characters, not an event name)`;

/** `/^dl_[\x21-\x7e]{1,253}$/`: the `dl_` prefix, then visible ASCII, 256 characters at most. */
/**
 * `dl_` and 1 to 125 characters of `A-Z a-z 0-9 _ - . :` (128 at most). The header is not signed and
 * reaches logs, spans and the inbox, so it is held to characters that need no escaping anywhere.
 */
function isDeliveryId(v: string): boolean {
  // A loop, not a RegExp: it runs on every delivery (icount: the RegExp cost more).
  if (v.length < 4 || v.length > 128 || !v.startsWith('dl_')) return false;
  for (let i = 3; i < v.length; i++) {
    const c = v.charCodeAt(i);
    const letterOrDigit = (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
    if (!letterOrDigit && c !== 0x5f && c !== 0x2d && c !== 0x2e && c !== 0x3a) return false; // _ - . :
  }
  return true;
}

/**
 * Proves a delivery came from the payment service and returns its typed, validated `payment.paid` event.
 *
 * Checks, in order: the signature over the exact received bytes (`t` + `.` + body, HMAC-SHA256, constant
 * time, any configured secret), the timestamp within `toleranceSec` in both directions, then the JSON
 * payload against spec 2.3, `X-Service-Event` against the body, and a `dl_` delivery id. Rejects only with
 * a `WebhookError`; an authentic event of another type rejects with code `UNSUPPORTED_EVENT` (status 200).
 *
 * The options are checked the first time a secret (or rotation list) is seen with its tolerance and clock,
 * and again whenever one of them differs; an options object written inline on every call costs no more than
 * one kept for all calls.
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
export async function verifyWebhook(input: VerifyInput, options: VerifyOptions): Promise<VerifiedDelivery> {
  return verifyResolved(input, resolvedOnce(options));
}

/**
 * `verifyWebhook` with options resolved once by the caller (the handler). With node:crypto the HMAC is
 * synchronous, and so is this: it returns the delivery or throws. With Web Crypto it returns a promise.
 * Either way only `WebhookError` is thrown or rejected. A handler passes its `hints`, so that a mismatch
 * carries a hint only the first time its cause is seen; without them every mismatch explains itself.
 */
export function verifyResolved(
  input: { rawBody: unknown; headers: unknown },
  options: ResolvedVerifyOptions,
  hints?: MismatchHints,
): VerifiedDelivery | Promise<VerifiedDelivery> {
  if (input === null || typeof input !== 'object') {
    throw new WebhookError('MISSING_SIGNATURE', 'verifyWebhook needs { rawBody, headers }.');
  }
  const body = toRawBytes(input.rawBody);
  const { headers } = input;
  const header = parseSignatureHeader(readHeader(headers, HEADER.signature, 'MALFORMED_SIGNATURE'));
  const { secrets } = options;
  if (secrets.length === 1) {
    // One secret, the usual case: no list of digests grown and no iterator to walk it (icount: about 300
    // instructions of a delivery's verification).
    const digest = cryptoBackend.signPayload(secrets[0] as string, header.timestampText, body);
    return digest instanceof Promise
      ? digest.then((signed) => afterSignature([signed], header, body, headers, options, hints))
      : afterSignature([digest], header, body, headers, options, hints);
  }
  const digests: Array<Digest | Promise<Digest>> = [];
  let pending = false;
  for (const secret of secrets) {
    const digest = cryptoBackend.signPayload(secret, header.timestampText, body);
    if (digest instanceof Promise) pending = true;
    else if (!pending && signedWith(digest, header)) {
      // A rotation list stops at the secret that signed: each one after it would cost an HMAC. That it
      // matched early tells the sender only which of the secrets it signed with, which it knows. Matched
      // here, it is not compared again (a comparison decodes the received hex).
      return afterSignature(MATCHED, header, body, headers, options, hints);
    }
    digests.push(digest);
  }
  if (!pending) return afterSignature(digests as Digest[], header, body, headers, options, hints);
  return Promise.all(digests).then((signed) => afterSignature(signed, header, body, headers, options, hints));
}

/** Said in place of the digests by a caller that has already matched the signature (a rotation list). */
const MATCHED = Symbol('the signature matched');

/**
 * The signature checked against `digests` (or already matched: `MATCHED`, said explicitly, so that no
 * value left undefined by mistake skips the check), then the timestamp, the payload, the event and delivery
 * headers. One function, not two: the single secret's path is the common one and pays no extra call.
 */
function afterSignature(
  digests: readonly Digest[] | typeof MATCHED,
  header: SignatureHeader,
  body: Uint8Array | string,
  headers: unknown,
  options: ResolvedVerifyOptions,
  hints: MismatchHints | undefined,
): VerifiedDelivery {
  if (digests !== MATCHED) checkSignature(digests, header, options.secrets, body, hints);
  checkTimestamp(header.timestamp, options);

  const text = typeof body === 'string' ? body : cryptoBackend.decodeUtf8(body);
  if (text === undefined) throw new WebhookError('INVALID_PAYLOAD', 'The payload is not valid UTF-8.');
  const printable = typeof body !== 'string' && isPrintableJson(text, body);
  const parsed = parseJsonObject(text, printable);
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
        : 'X-Service-Delivery must be "dl_" and 1 to 125 of A-Z a-z 0-9 _ - . :',
    );
  }
  if (eventType !== PAYMENT_PAID) throw unsupportedEvent(eventType);
  assertPaymentPaidEvent(parsed, printable);
  return { event: parsed, deliveryId, timestamp: header.timestamp };
}

/**
 * The refusal of an authentic event of another type: an answer (acknowledged with 200), not a fault, so it
 * carries no stack trace. Capturing one walked V8's optimized frames and cost more than a whole credit
 * (icount: 77k instructions for such a delivery against 59k for a credit). Where the limit cannot be set
 * (frozen intrinsics), the error is made as any other.
 */
function unsupportedEvent(eventType: string): WebhookError {
  const message = `Event type ${quoteEventName(eventType)} is not handled; acknowledged.`;
  const limit = Error.stackTraceLimit;
  let lowered = false;
  try {
    Error.stackTraceLimit = 0;
    lowered = true;
  } catch {
    // Not settable: made with a stack (above).
  }
  try {
    return new WebhookError('UNSUPPORTED_EVENT', message);
  } finally {
    if (lowered) Error.stackTraceLimit = limit;
  }
}

/** Whether any received `v1` equals `digest` (each comparison constant-time). */
function signedWith(digest: Digest, header: SignatureHeader): boolean {
  for (const at of header.v1At) if (cryptoBackend.digestMatches(digest, header.text, at)) return true;
  return false;
}

/** Any received `v1` equal to the digest of any configured secret passes; each comparison is constant-time. */
function checkSignature(
  digests: readonly Digest[],
  header: SignatureHeader,
  secrets: readonly string[],
  body: Uint8Array | string,
  hints: MismatchHints | undefined,
): void {
  for (const digest of digests) if (signedWith(digest, header)) return;
  assertSignaturesAreHex(header);
  const hint = hints === undefined ? mismatchHint(secrets, body) : hints.next(body);
  throw new WebhookError(
    'SIGNATURE_MISMATCH',
    'No signature in X-Service-Signature matches.',
    hint === undefined ? undefined : { hint },
  );
}

function checkTimestamp(timestamp: number, options: ResolvedVerifyOptions): void {
  const skewSec = readClock(options.now) / 1000 - timestamp;
  if (Math.abs(skewSec) > options.toleranceSec) {
    throw new WebhookError(
      'TIMESTAMP_OUT_OF_TOLERANCE',
      `The signature timestamp is ${Math.round(Math.abs(skewSec))} s ${skewSec > 0 ? 'behind' : 'ahead of'} this server's clock (tolerance ${options.toleranceSec} s). Either this is a replay of an old delivery or this server's clock is wrong.`,
    );
  }
}

/**
 * Whether the body is printable ASCII with no escapes: every byte below 0x80, no backslash and no DEL.
 * `text` is the strict UTF-8 decode of `bytes`, and in valid UTF-8 every sequence but a one-byte (ASCII) one
 * decodes to fewer UTF-16 units than it has bytes, so equal lengths mean every byte is ASCII: no second pass
 * over the body (icount: the native ASCII check was a call and a pass on every delivery). JSON.parse
 * refuses raw control characters inside strings, so every string parsed from such a body is 0x20-0x7e
 * throughout, and the text fields' character checks hold for all of them at once (what the service sends;
 * anything else takes the per-field checks).
 */
function isPrintableJson(text: string, bytes: Uint8Array): boolean {
  return text.length === bytes.byteLength && !text.includes('\\') && !text.includes('\x7f');
}

/** Whether the text could name `__proto__` or `constructor` (plainly, or with `\u` escapes, which a printable body has none of). */
const mayHoldReservedKey = (text: string, printable: boolean): boolean =>
  text.includes('__proto__') || text.includes('constructor') || (!printable && text.includes('\\u'));

function dropReservedKeys(key: string, value: unknown): unknown {
  return key === '__proto__' || key === 'constructor' ? undefined : value;
}

function parseJsonObject(text: string, printable: boolean): Record<string, unknown> {
  let parsed: unknown;
  try {
    // A key "__proto__" or "constructor" (also written with \u escapes) is dropped: it is never a payment
    // field, and an own "__proto__" on the event would surprise code that spreads or merges it. The reviver
    // costs a call per value, so it only runs when the text could hold one.
    parsed = mayHoldReservedKey(text, printable) ? JSON.parse(text, dropReservedKeys) : JSON.parse(text);
  } catch {
    throw new WebhookError('INVALID_PAYLOAD', 'The payload is not valid JSON.');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new WebhookError('INVALID_PAYLOAD', 'The payload must be a JSON object.');
  }
  return parsed as Record<string, unknown>;
}
