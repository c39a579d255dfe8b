import { bodyTooLarge } from './body-limit.js';
import { ClaimTokens } from './claim-token.js';
import type { ClaimOutcome } from './dedupe-store.js';
import { PaymentRejectedError, WebhookError } from './errors.js';
import type { PaymentPaidEvent } from './event.js';
import { fingerprintOf } from './fingerprint.js';
import {
  type HandlerOptions,
  type PaymentPaidContext,
  type ResolvedHandlerOptions,
  resolveHandlerOptions,
} from './handler-options.js';
import { HEADER, type HeadersInput, readHeader } from './headers.js';
import { type Lease, LeaseKeeper } from './lease.js';
import { CLAIMED, SETTLED_CLAIMED, SETTLED_TRUE } from './memory-store.js';
import { exceedsBytes, type RawBody, toRawBytes } from './raw-body.js';
import {
  DUPLICATE,
  errorResponse,
  IGNORED,
  jsonResponse,
  RECEIVED,
  REJECTED,
  type WebhookResponse,
} from './response.js';
import { type VerifiedDelivery, verifyResolved } from './verify.js';

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
  rawBody: RawBody | ((maxBytes: number) => Promise<RawBody>);
}

/** Handles one delivery end to end; never rejects. */
export type WebhookRequestHandler = (request: WebhookRequest) => Promise<WebhookResponse>;

/** A handler slower than this is warned about: the sender gives up at 5 s and retries. */
const SLOW_HANDLER_MS = 4_000;
/** How long a sender should wait before retrying when the store is down. */
const STORE_RETRY_AFTER_SEC = '2';
const JSON_CONTENT_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

/**
 * Builds the exactly-once webhook pipeline: verify, claim the payment's dedupe key, run `onPaymentPaid`
 * once, record completion, and answer every situation with the status the sender needs (200 stops its
 * retries, anything else makes it retry). Framework-neutral: adapters translate their request into
 * `{ method, headers, rawBody }` and copy the `{ status, headers, body }` answer back.
 *
 * @example
 * ```ts
 * import { createWebhookHandler } from '@service-pay/core';
 *
 * const handle = createWebhookHandler({
 *   secret: process.env.SERVICE_WEBHOOK_SECRET!,
 *   onPaymentPaid: async (event) => orders.credit(event.orderNo, event.paymentId),
 * });
 * const { status, headers, body } = await handle({ method: 'POST', headers: req.headers, rawBody: buffer });
 * ```
 */
export function createWebhookHandler(options: HandlerOptions): WebhookRequestHandler {
  const resolved = resolveHandlerOptions(options);
  const leases = new LeaseKeeper(resolved.store, resolved.leaseMs, resolved.bounded, resolved.logger);
  const tokens = new ClaimTokens();
  return (request) => handleDelivery(resolved, leases, tokens, request);
}

/**
 * Checks and verifies the request, then hands it to `handleOnce`. Not itself async: with the body in hand
 * and node:crypto, everything up to the claim runs synchronously, and under load every extra async frame
 * is a measurable share of a delivery.
 */
function handleDelivery(
  o: ResolvedHandlerOptions,
  leases: LeaseKeeper,
  tokens: ClaimTokens,
  request: WebhookRequest,
): Promise<WebhookResponse> {
  try {
    const verified = receive(o, request);
    if (verified instanceof Promise) {
      return verified.then(
        (delivery) => handleOnce(o, leases, tokens, delivery),
        (error) => refusal(o, error),
      );
    }
    return handleOnce(o, leases, tokens, verified);
  } catch (error) {
    return Promise.resolve(refusal(o, error));
  }
}

/** The answer to a request refused before its claim, or to an error nobody expected (then 500, retried). */
function refusal(o: ResolvedHandlerOptions, error: unknown): WebhookResponse {
  if (!(error instanceof WebhookError)) {
    o.logger.error({ err: error }, 'Unexpected error in the webhook pipeline');
    return errorResponse(new WebhookError('HANDLER_FAILED', 'Unexpected error; the delivery will be retried.'));
  }
  if (error.code === 'UNSUPPORTED_EVENT') {
    o.logger.debug?.({ code: error.code }, error.message);
    return jsonResponse(200, IGNORED);
  }
  if (error.code === 'RAW_BODY_UNAVAILABLE' || error.code === 'INVALID_OPTIONS') {
    o.logger.error({ code: error.code }, error.message);
  }
  return errorResponse(error, error.code === 'METHOD_NOT_ALLOWED' ? { allow: 'POST' } : undefined);
}

/**
 * Method, headers and size are checked before the body is read, then the body is verified. Synchronous
 * when the body is already in hand and the crypto is (node:crypto); a promise otherwise.
 */
function receive(o: ResolvedHandlerOptions, request: WebhookRequest): VerifiedDelivery | Promise<VerifiedDelivery> {
  if (request.method !== 'POST') {
    throw new WebhookError(
      'METHOD_NOT_ALLOWED',
      `Webhooks are delivered with POST, not ${String(request.method).slice(0, 16)}.`,
    );
  }
  const { headers } = request;
  const contentType = readHeader(headers, HEADER.contentType, 'UNSUPPORTED_MEDIA_TYPE');
  // The service sends exactly `application/json`; the RegExp covers parameters and `+json` types.
  if (contentType === undefined || (contentType !== 'application/json' && !JSON_CONTENT_TYPE.test(contentType))) {
    throw new WebhookError('UNSUPPORTED_MEDIA_TYPE', 'Webhooks are sent with Content-Type: application/json.');
  }
  const declaredLength = readHeader(headers, 'content-length', 'UNSUPPORTED_MEDIA_TYPE');
  if (declaredLength !== undefined && Number(declaredLength) > o.maxBodyBytes) throw bodyTooLarge(o.maxBodyBytes);
  const { rawBody } = request;
  if (typeof rawBody === 'function') return rawBody(o.maxBodyBytes).then((raw) => verifyBody(o, raw, headers));
  return verifyBody(o, rawBody, headers);
}

function verifyBody(
  o: ResolvedHandlerOptions,
  raw: RawBody,
  headers: HeadersInput,
): VerifiedDelivery | Promise<VerifiedDelivery> {
  const body = toRawBytes(raw);
  if (exceedsBytes(body, o.maxBodyBytes)) throw bodyTooLarge(o.maxBodyBytes);
  return verifyResolved({ rawBody: body, headers }, o.verify);
}

/**
 * The exactly-once part of a verified delivery: claim its dedupe key; if this delivery won the claim, run
 * `onPaymentPaid` while its lease is kept alive, then record completion.
 *
 * It awaits only what is really pending. Under HTTP load each await costs far more than its microtask
 * (measured: three `await null`s cost a hand-written Fastify route up to 5% of its requests/s). So a
 * handler that returns synchronously is not awaited (as Fastify does with hooks), and the in-process
 * store's usual answers, promises settled once at load, are read without a turn. A network store's
 * answers and an async handler are awaited as they must be.
 */
async function handleOnce(
  o: ResolvedHandlerOptions,
  leases: LeaseKeeper,
  tokens: ClaimTokens,
  verified: VerifiedDelivery,
): Promise<WebhookResponse> {
  try {
    const d = new ClaimedDelivery(o.dedupeKey(verified.event), tokens.next(), verified);
    let outcome: ClaimOutcome;
    try {
      const claiming = o.bounded(o.store.claim(d.key, d.token, d.fingerprint, o.leaseMs), 'The dedupe store');
      outcome = claiming === SETTLED_CLAIMED ? CLAIMED : await claiming;
    } catch (error) {
      o.logger.error({ ...d.logFields(), err: error }, 'Dedupe store unavailable; answered 503 so the sender retries');
      return errorResponse(new WebhookError('STORE_UNAVAILABLE', 'The dedupe store is unavailable; retry later.'), {
        'retry-after': STORE_RETRY_AFTER_SEC,
      });
    }
    if (outcome.state !== 'claimed') return seenBefore(o, d, outcome);

    const lease = leases.keep(d.key, d.token);
    const started = Date.now();
    let answer = RECEIVED;
    try {
      const running = o.onPaymentPaid(d.event, new DeliveryContext(d.deliveryId, d.timestamp, lease));
      if (isThenable(running)) await running;
    } catch (error) {
      leases.release(lease);
      if (!(error instanceof PaymentRejectedError)) return await handlerFailed(o, d, error);
      o.logger.error(
        { ...d.logFields(), reason: error.reason },
        'Payment rejected by onPaymentPaid; recorded as completed, not credited',
      );
      answer = REJECTED;
    } finally {
      leases.release(lease);
      warnIfSlow(o, d, Date.now() - started);
    }

    let recorded = false;
    let cause: unknown;
    try {
      const completing = o.bounded(o.store.complete(d.key, d.token, o.retainMs), 'complete');
      recorded = completing === SETTLED_TRUE || (await completing);
    } catch (error) {
      cause = error;
    }
    if (!recorded) {
      // The work is done, so the sender must hear 200; only the database guard stops a later retry now.
      o.logger.error(
        { ...d.logFields(), err: cause },
        'Handled, but completion was not recorded (lease lost or store down); a retry may run the handler again',
      );
    }
    return jsonResponse(200, answer);
  } catch (error) {
    return refusal(o, error);
  }
}

/** The answer for a key this store has seen: a duplicate, a delivery still running, or a conflict. */
function seenBefore(
  o: ResolvedHandlerOptions,
  d: ClaimedDelivery,
  outcome: Exclude<ClaimOutcome, { state: 'claimed' }>,
): WebhookResponse {
  if (outcome.fingerprint !== d.fingerprint) {
    o.logger.error(
      { ...d.logFields(), alert: true },
      'ALERT: a delivery for this payment carries different signed payment fields than the one seen before; not handled',
    );
    return errorResponse(
      new WebhookError('PAYLOAD_CONFLICT', 'This payment was already seen with different payment fields; not handled.'),
    );
  }
  if (outcome.state === 'completed') return jsonResponse(200, DUPLICATE);
  const retryAfter = String(Math.max(1, Math.ceil(outcome.retryAfterMs / 1000)));
  return errorResponse(
    new WebhookError('DELIVERY_IN_PROGRESS', 'Another delivery of this payment is being handled; retry later.'),
    { 'retry-after': retryAfter },
  );
}

/** `onPaymentPaid` threw: give the claim back so the sender's retry can run it again. */
async function handlerFailed(o: ResolvedHandlerOptions, d: ClaimedDelivery, error: unknown): Promise<WebhookResponse> {
  o.logger.error({ ...d.logFields(), err: error }, 'onPaymentPaid failed; claim released, the sender will retry');
  try {
    await o.bounded(o.store.release(d.key, d.token), 'release');
  } catch (releaseError) {
    // The lease still expires on its own; the retry gets 409 until then.
    o.logger.error(
      { ...d.logFields(), err: releaseError },
      'Could not release the claim; it frees itself when the lease expires',
    );
  }
  return errorResponse(new WebhookError('HANDLER_FAILED', 'The payment handler failed; the delivery will be retried.'));
}

function warnIfSlow(o: ResolvedHandlerOptions, d: ClaimedDelivery, elapsedMs: number): void {
  if (elapsedMs > SLOW_HANDLER_MS) {
    o.logger.warn(
      { ...d.logFields(), elapsedMs },
      'onPaymentPaid took over 4 s; the sender times out at 5 s and retries',
    );
  }
}

/** A verified delivery and what it claims the store with: its dedupe key, its token and its fingerprint. */
class ClaimedDelivery {
  readonly event: PaymentPaidEvent;
  readonly deliveryId: string;
  readonly timestamp: number;
  readonly fingerprint: string;

  constructor(
    readonly key: string,
    readonly token: string,
    verified: VerifiedDelivery,
  ) {
    this.event = verified.event;
    this.deliveryId = verified.deliveryId;
    this.timestamp = verified.timestamp;
    this.fingerprint = fingerprintOf(verified.event);
  }

  /** Built only when something is logged. */
  logFields(): Record<string, unknown> {
    return { key: this.key, paymentId: this.event.paymentId, orderNo: this.event.orderNo, deliveryId: this.deliveryId };
  }
}

/**
 * The `ctx` handed to `onPaymentPaid`. A class rather than an object literal with a getter: V8 builds such
 * literals through a slow runtime path, and this is made on every first delivery.
 */
class DeliveryContext implements PaymentPaidContext {
  constructor(
    readonly deliveryId: string,
    readonly timestamp: number,
    readonly lease: Lease,
  ) {}

  get signal(): AbortSignal {
    return this.lease.signal;
  }
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | null)?.then === 'function';
}
