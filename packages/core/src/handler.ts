import { cryptoBackend } from '#crypto';
import { bodyTooLarge } from './body-limit.js';
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
import { verifyResolved } from './verify.js';

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
  return async (request) => {
    try {
      return await handleDelivery(resolved, leases, request);
    } catch (error) {
      if (error instanceof WebhookError) return refusal(resolved, error);
      resolved.logger.error({ err: error }, 'Unexpected error in the webhook pipeline');
      return errorResponse(new WebhookError('HANDLER_FAILED', 'Unexpected error; the delivery will be retried.'));
    }
  };
}

function refusal(o: ResolvedHandlerOptions, error: WebhookError): WebhookResponse {
  if (error.code === 'UNSUPPORTED_EVENT') {
    o.logger.debug?.({ code: error.code }, error.message);
    return jsonResponse(200, IGNORED);
  }
  if (error.code === 'RAW_BODY_UNAVAILABLE' || error.code === 'INVALID_OPTIONS') {
    o.logger.error({ code: error.code }, error.message);
  }
  return errorResponse(error, error.code === 'METHOD_NOT_ALLOWED' ? { allow: 'POST' } : undefined);
}

async function handleDelivery(
  o: ResolvedHandlerOptions,
  leases: LeaseKeeper,
  request: WebhookRequest,
): Promise<WebhookResponse> {
  if (request.method !== 'POST') {
    throw new WebhookError(
      'METHOD_NOT_ALLOWED',
      `Webhooks are delivered with POST, not ${String(request.method).slice(0, 16)}.`,
    );
  }
  const { headers } = request;
  const contentType = readHeader(headers, HEADER.contentType, 'UNSUPPORTED_MEDIA_TYPE');
  if (contentType === undefined || !JSON_CONTENT_TYPE.test(contentType)) {
    throw new WebhookError('UNSUPPORTED_MEDIA_TYPE', 'Webhooks are sent with Content-Type: application/json.');
  }
  const declaredLength = readHeader(headers, 'content-length', 'UNSUPPORTED_MEDIA_TYPE');
  if (declaredLength !== undefined && Number(declaredLength) > o.maxBodyBytes) throw bodyTooLarge(o.maxBodyBytes);

  const raw = typeof request.rawBody === 'function' ? await request.rawBody(o.maxBodyBytes) : request.rawBody;
  const body = toRawBytes(raw);
  if (exceedsBytes(body, o.maxBodyBytes)) throw bodyTooLarge(o.maxBodyBytes);

  let verified = verifyResolved({ rawBody: body, headers }, o.verify);
  if (verified instanceof Promise) verified = await verified;
  const { event, deliveryId, timestamp } = verified;
  const key = o.dedupeKey(event);
  const fingerprint = fingerprintOf(event);
  const token = cryptoBackend.randomToken();
  // Log fields are built only when something is logged.
  const log = () => ({ key, paymentId: event.paymentId, orderNo: event.orderNo, deliveryId });

  let outcome: Awaited<ReturnType<typeof o.store.claim>>;
  try {
    outcome = await o.bounded(o.store.claim(key, token, fingerprint, o.leaseMs), 'The dedupe store');
  } catch (error) {
    o.logger.error({ ...log(), err: error }, 'Dedupe store unavailable; answered 503 so the sender retries');
    return errorResponse(new WebhookError('STORE_UNAVAILABLE', 'The dedupe store is unavailable; retry later.'), {
      'retry-after': STORE_RETRY_AFTER_SEC,
    });
  }

  if (outcome.state !== 'claimed' && outcome.fingerprint !== fingerprint) {
    o.logger.error(
      { ...log(), alert: true },
      'ALERT: a delivery for this payment carries different signed payment fields than the one seen before; not handled',
    );
    return errorResponse(
      new WebhookError('PAYLOAD_CONFLICT', 'This payment was already seen with different payment fields; not handled.'),
    );
  }
  if (outcome.state === 'completed') return jsonResponse(200, DUPLICATE);
  if (outcome.state === 'in-progress') {
    const retryAfter = String(Math.max(1, Math.ceil(outcome.retryAfterMs / 1000)));
    return errorResponse(
      new WebhookError('DELIVERY_IN_PROGRESS', 'Another delivery of this payment is being handled; retry later.'),
      { 'retry-after': retryAfter },
    );
  }
  return runHandler(o, leases, { key, token, log, event, deliveryId, timestamp });
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

interface ClaimedDelivery {
  key: string;
  token: string;
  log: () => Record<string, unknown>;
  event: PaymentPaidEvent;
  deliveryId: string;
  timestamp: number;
}

async function runHandler(
  o: ResolvedHandlerOptions,
  leases: LeaseKeeper,
  d: ClaimedDelivery,
): Promise<WebhookResponse> {
  const lease = leases.keep(d.key, d.token);
  const started = Date.now();
  try {
    await o.onPaymentPaid(d.event, new DeliveryContext(d.deliveryId, d.timestamp, lease));
  } catch (error) {
    leases.release(lease);
    if (error instanceof PaymentRejectedError) {
      o.logger.error(
        { ...d.log(), reason: error.reason },
        'Payment rejected by onPaymentPaid; recorded as completed, not credited',
      );
      await completeOrLog(o, d.key, d.token, d.log);
      return jsonResponse(200, REJECTED);
    }
    o.logger.error({ ...d.log(), err: error }, 'onPaymentPaid failed; claim released, the sender will retry');
    try {
      await o.bounded(o.store.release(d.key, d.token), 'release');
    } catch (releaseError) {
      // The lease still expires on its own; the retry gets 409 until then.
      o.logger.error(
        { ...d.log(), err: releaseError },
        'Could not release the claim; it frees itself when the lease expires',
      );
    }
    return errorResponse(
      new WebhookError('HANDLER_FAILED', 'The payment handler failed; the delivery will be retried.'),
    );
  } finally {
    leases.release(lease);
    const elapsed = Date.now() - started;
    if (elapsed > SLOW_HANDLER_MS) {
      o.logger.warn(
        { ...d.log(), elapsedMs: elapsed },
        'onPaymentPaid took over 4 s; the sender times out at 5 s and retries',
      );
    }
  }
  await completeOrLog(o, d.key, d.token, d.log);
  return jsonResponse(200, RECEIVED);
}

async function completeOrLog(
  o: ResolvedHandlerOptions,
  key: string,
  token: string,
  log: () => Record<string, unknown>,
) {
  let recorded = false;
  let cause: unknown;
  try {
    recorded = await o.bounded(o.store.complete(key, token, o.retainMs), 'complete');
  } catch (error) {
    cause = error;
  }
  if (!recorded) {
    // The work is done, so the sender must hear 200; only the database guard stops a later retry now.
    o.logger.error(
      { ...log(), err: cause },
      'Handled, but completion was not recorded (lease lost or store down); a retry may run the handler again',
    );
  }
}
