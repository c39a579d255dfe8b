import { WebhookError } from '../errors/webhook-error.js';
import { fingerprintOf } from '../event/fingerprint.js';
import type { WebhookResponse } from '../http/response.js';
import { receiveBody, type WebhookRequest } from '../http/webhook-request.js';
import { Reporter, type ReportSubject } from '../observe/reporter.js';
import type { DedupeStore } from '../store/dedupe-store.js';
import type { WebhookStore } from '../store/transactional-store.js';
import { HEADER, readHeader } from '../verify/headers.js';
import { MismatchHints } from '../verify/mismatch-hint.js';
import { type VerifiedDelivery, verifyResolved } from '../verify/verify-webhook.js';
import { type AttemptConclusion, PaymentAttempt } from './attempt.js';
import { AttemptEngine } from './attempt-engine.js';
import { type HandlerOptions, type ResolvedHandlerOptions, resolveHandlerOptions } from './handler-options.js';
import { answerFor, refusalAnswer, UNEXPECTED_ANSWER } from './webhook-answer.js';

/**
 * Handles one delivery end to end; never rejects. Carries the body limit it enforces, so an adapter whose
 * framework reads the body itself (Fastify's `bodyLimit`) uses the core's value instead of a copy.
 *
 * @example
 * ```ts
 * const handle: WebhookRequestHandler = createWebhookHandler({ secret, onPaymentPaid });
 * fastify.post('/webhooks/service', { bodyLimit: handle.maxBodyBytes }, route);
 * ```
 */
export interface WebhookRequestHandler {
  (request: WebhookRequest): Promise<WebhookResponse>;
  /** The resolved `maxBodyBytes` (default 64 KiB). */
  readonly maxBodyBytes: number;
  /** The resolved `bodyTimeoutMs` (default 10 s), for adapters whose framework reads the body itself. */
  readonly bodyTimeoutMs: number;
}

/**
 * Builds the exactly-once webhook pipeline: read the body (bounded), verify, validate, claim the payment's
 * dedupe key, run `onPaymentPaid` once (lease kept alive, deadline enforced), record completion, and answer
 * every situation with the status the sender needs (200 stops its retries, anything else makes it retry).
 * Framework-neutral: adapters translate their request into `{ method, headers, rawBody }` and copy the
 * `{ status, headers, body }` answer back. Options (the secret included) are checked here, once.
 *
 * @example
 * ```ts
 * import { createWebhookHandler } from '@service-pay/core';
 *
 * const handle = createWebhookHandler({
 *   secret: process.env.SERVICE_WEBHOOK_SECRET!,
 *   onPaymentPaid: async (event, ctx) => orders.credit(event.orderNo, event.paymentId, ctx.signal),
 * });
 * const { status, headers, body } = await handle({ method: 'POST', headers: req.headers, rawBody: buffer });
 * ```
 */
export function createWebhookHandler<S extends WebhookStore = DedupeStore>(
  options: HandlerOptions<S>,
): WebhookRequestHandler {
  const o = resolveHandlerOptions(options);
  const engine = new AttemptEngine(o.pipeline, [options.secret].flat());
  const reporter = new Reporter(o.pipeline.logger, o.pipeline.onOutcome, engine.now);
  // The reporter logs each setup hint once; past that, a signature mismatch need not compute its hint.
  const hints = new MismatchHints(o.verify.secrets);
  // How an attempt becomes an answer: made once, handed to every attempt.
  const conclusion: AttemptConclusion<WebhookResponse> = {
    concluded: (result, attempt) => {
      reporter.attempt(result, attempt);
      return answerFor(result, o.pipeline.leaseMs);
    },
    lateUse: (error, attempt) => reporter.lateUse(error, attempt),
    broke: (error, attempt) => {
      reporter.unexpected(error, attempt);
      return UNEXPECTED_ANSWER;
    },
  };
  const handle = (request: WebhookRequest) => handleDelivery(o, engine, reporter, hints, conclusion, request);
  return Object.assign(handle, { maxBodyBytes: o.maxBodyBytes, bodyTimeoutMs: o.bodyLimits.timeoutMs });
}

/**
 * Receives and verifies a request, then hands it to `exactlyOnce`. Not itself async: with the body in hand
 * and node:crypto, everything up to the claim runs synchronously, and under load every async frame and
 * await is a measurable share of a delivery (bench/README.md). With a body to read, or Web Crypto, the same
 * stages run through promises.
 */
function handleDelivery(
  o: ResolvedHandlerOptions,
  engine: AttemptEngine,
  reporter: Reporter,
  hints: MismatchHints,
  conclusion: AttemptConclusion<WebhookResponse>,
  request: WebhookRequest,
): Promise<WebhookResponse> {
  const startedAt = engine.now();
  let verified: VerifiedDelivery | Promise<VerifiedDelivery>;
  try {
    const body = receiveBody(request, o.maxBodyBytes, o.bodyLimits);
    verified =
      body instanceof Promise
        ? body.then((bytes) => verifyResolved({ rawBody: bytes, headers: request.headers }, o.verify, hints))
        : verifyResolved({ rawBody: body, headers: request.headers }, o.verify, hints);
  } catch (error) {
    return Promise.resolve(refuse(reporter, error, startedAt, request));
  }
  if (verified instanceof Promise) {
    return verified.then(
      (delivery) => exactlyOnce(o, engine, reporter, conclusion, delivery, startedAt),
      (error: unknown) => refuse(reporter, error, startedAt, request),
    );
  }
  return exactlyOnce(o, engine, reporter, conclusion, verified, startedAt);
}

/** The answer to a request refused before any payment was looked at (or to a bug: 500, retried). */
function refuse(reporter: Reporter, error: unknown, startedAt: number, request: WebhookRequest): WebhookResponse {
  const subject: ReportSubject = { source: 'webhook', startedAt };
  if (!(error instanceof WebhookError)) {
    reporter.unexpected(error, subject);
    return UNEXPECTED_ANSWER;
  }
  if (error.code === 'MISSING_SIGNATURE' && isProbe(request)) reporter.probe(error, subject);
  else reporter.refusal(error, subject);
  return refusalAnswer(error);
}

/** An unsigned request marked as `service-pay listen`'s reachability check (see `HEADER.probe`). */
function isProbe(request: WebhookRequest): boolean {
  try {
    return (
      readHeader((request as Partial<WebhookRequest> | null)?.headers, HEADER.probe, 'MALFORMED_SIGNATURE') !==
      undefined
    );
  } catch {
    return false; // the mark sent twice: not the CLI's, logged as any refusal
  }
}

/** The exactly-once part of a verified delivery: one attempt, reported and answered. */
function exactlyOnce(
  o: ResolvedHandlerOptions,
  engine: AttemptEngine,
  reporter: Reporter,
  conclusion: AttemptConclusion<WebhookResponse>,
  { event, deliveryId, timestamp }: VerifiedDelivery,
  startedAt: number,
): Promise<WebhookResponse> {
  let attempt: PaymentAttempt;
  try {
    attempt = new PaymentAttempt(
      dedupeKeyOf(o, event),
      fingerprintOf(event),
      event,
      'webhook',
      deliveryId,
      timestamp,
      o.onPaymentPaid,
      startedAt,
    );
  } catch (error) {
    const subject: ReportSubject = { source: 'webhook', startedAt, paymentId: event.paymentId, deliveryId };
    if (!(error instanceof WebhookError)) {
      reporter.unexpected(error, subject);
      return Promise.resolve(UNEXPECTED_ANSWER);
    }
    reporter.refusal(error, subject);
    return Promise.resolve(refusalAnswer(error));
  }
  return engine.attempt(attempt, conclusion);
}

/** The merchant's `dedupeKey` option: a throw or a non-key is a setup mistake (INVALID_OPTIONS), not a bug. */
function dedupeKeyOf(o: ResolvedHandlerOptions, event: VerifiedDelivery['event']): string {
  let key: unknown;
  try {
    key = o.dedupeKey(event);
  } catch (error) {
    throw new WebhookError(
      'INVALID_OPTIONS',
      `options.dedupeKey threw: ${(error as Error)?.message ?? String(error)}`,
      {
        cause: error,
      },
    );
  }
  if (typeof key !== 'string' || key.length === 0) {
    throw new WebhookError(
      'INVALID_OPTIONS',
      `options.dedupeKey returned ${typeof key === 'string' ? 'an empty string' : typeof key}, not a key.`,
    );
  }
  return key;
}
