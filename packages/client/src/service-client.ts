import { checkPaymentInput } from './check-payment-input.js';
import { describe } from './describe-value.js';
import {
  ServiceAbortError,
  ServiceApiError,
  type ServiceError,
  ServiceInputError,
  ServiceNetworkError,
  ServiceTimeoutError,
} from './errors.js';
import type { CreatePaymentInput, Payment } from './payment.js';
import {
  type AttemptFailure,
  decideRetry,
  parseRetryAfter,
  provablyNotSent,
  type RetryOptions,
  type RetryPolicy,
  resolveRetry,
  summarizeFailure,
} from './retry-policy.js';
import { signApiRequest } from './sign-api-request.js';
import { timerMs } from './timer-ms.js';

/**
 * Options of `createServiceClient`.
 *
 * @example
 * ```ts
 * const options: ServiceClientOptions = {
 *   baseUrl: 'https://pay.example',
 *   apiKey: process.env.SERVICE_API_KEY!,
 *   apiSecret: process.env.SERVICE_API_SECRET!,
 *   timeoutMs: 10_000,
 *   retry: { maxAttempts: 4, deadlineMs: 20_000 },
 * };
 * ```
 */
export interface ServiceClientOptions {
  /** The service's base address, such as `https://pay.example` (a path prefix is kept and signed). */
  baseUrl: string;
  apiKey: string;
  apiSecret: string;
  /** A fetch implementation. Default: the global `fetch`, looked up at call time. */
  fetch?: typeof globalThis.fetch | undefined;
  /** Per-attempt limit for the whole answer, headers and body. Default 10 000 ms; at most 2,147,483,647 (what a timer holds). */
  timeoutMs?: number | undefined;
  /**
   * The largest answer body read, in bytes. Default 1 MiB (a payment is under 1 KB). A larger one is
   * dropped unread past the limit and the call fails with `ServiceApiError` code `RESPONSE_TOO_LARGE`:
   * a broken proxy or a hostile server cannot fill this process's memory.
   */
  maxResponseBytes?: number | undefined;
  /**
   * Retries of failed requests (see `RetryOptions` for the defaults), or `false` for none. A read is
   * retried after a network error, a timeout, a 429 or a 5xx; `createPayment` only when the service
   * provably did not take the request (no connection, 429, 503 with `Retry-After`). A 4xx other than
   * 429 is never retried.
   */
  retry?: RetryOptions | boolean | undefined;
  /**
   * The clock in milliseconds, for signing timestamps, the retry deadline and `Retry-After` dates.
   * Default `Date.now`; a host with a known clock offset can correct it here.
   */
  now?: (() => number) | undefined;
}

/**
 * Per-call options of `createPayment` and `getPayment`.
 *
 * @example
 * ```ts
 * const payment = await client.getPayment('p_123', { signal: AbortSignal.timeout(5_000) });
 * ```
 */
export interface RequestOptions {
  /** Aborts the call: the request in flight and any wait before a retry. Rejects with `ServiceAbortError`. */
  signal?: AbortSignal | undefined;
}

/**
 * The merchant API, spec section 4. Both methods are plain functions that close over the client (no
 * `this`), so `client.getPayment` can be passed around unbound.
 *
 * @example
 * ```ts
 * const client: ServiceClient = createServiceClient({ baseUrl, apiKey, apiSecret });
 * const payment = await client.getPayment('p_123');
 * ```
 */
export interface ServiceClient {
  /**
   * `POST /v1/payments`. The input is checked first (see `checkPaymentInput`). Retried only when the
   * service provably did not take the request: the connection was never made, a 429, or a 503 with
   * `Retry-After`. After a timeout, a dropped connection or another 5xx the payment may exist, so it is not
   * sent again and the error says so.
   */
  createPayment(input: CreatePaymentInput, options?: RequestOptions): Promise<Payment>;
  /** `GET /v1/payments/:paymentId`. Retried after a network error, a timeout, a 429 or a 5xx. */
  getPayment(paymentId: string, options?: RequestOptions): Promise<Payment>;
}

const DEFAULT_TIMEOUT_MS = 10_000;
const DEFAULT_MAX_RESPONSE_BYTES = 1024 * 1024;
const CODE = /^[A-Za-z][A-Za-z0-9_.-]{0,63}$/;
/** Origins already warned about (plain http to another machine): once per process each. */
const warnedInsecure = new Set<string>();
const PAYMENT_ID = /^p_[A-Za-z0-9_-]{1,125}$/;

interface Resolved {
  origin: string;
  prefix: string;
  apiKey: string;
  apiSecret: string;
  fetch: typeof globalThis.fetch | undefined;
  timeoutMs: number;
  maxResponseBytes: number;
  retry: RetryPolicy | undefined;
  now: () => number;
}

type Method = 'GET' | 'POST';
type AttemptResult = { ok: true; payment: Payment } | { ok: false; failure: AttemptFailure };

/**
 * Creates a client for the merchant API. Every request is signed per spec 5.1 over the exact bytes sent,
 * and signed again (fresh timestamp) for every retry. Failed requests are retried with exponential
 * backoff and full jitter, honouring `Retry-After`, within a total deadline (`retry`). Errors are typed:
 * `ServiceInputError` (refused before sending), `ServiceApiError` (the service said no; `status`, `code`,
 * `message` from its error body), `ServiceTimeoutError`, `ServiceNetworkError` and `ServiceAbortError`;
 * each has `attempts`, and after retries its message lists why each attempt failed.
 *
 * @example
 * ```ts
 * import { createServiceClient } from '@service-pay/client';
 *
 * const client = createServiceClient({ baseUrl: 'http://127.0.0.1:4010', apiKey, apiSecret });
 * const payment = await client.createPayment({
 *   orderNo: 'order-42',
 *   tokenSymbol: 'USDT',
 *   amount: '12.50',
 *   expireSec: 900,
 *   notifyUrl: 'https://shop.example/webhooks/service',
 * });
 * console.log(payment.paymentId, payment.status);
 * ```
 */
export function createServiceClient(options: ServiceClientOptions): ServiceClient {
  const o = resolveOptions(options);
  // Arrow functions over `o`: nothing depends on `this`, so `createReconciler({ getPayment: client.getPayment })` works.
  const createPayment = async (input: CreatePaymentInput, call?: RequestOptions): Promise<Payment> => {
    const problems = checkPaymentInput(input);
    const first = problems[0];
    if (first !== undefined) {
      const rest =
        problems.length > 1
          ? ` (and ${problems.length - 1} more: ${problems
              .slice(1)
              .map((p) => p.code)
              .join(', ')})`
          : '';
      throw new ServiceInputError(first.code, `${first.message}${rest}`, first.field, problems);
    }
    return send(o, 'POST', '/v1/payments', JSON.stringify(input), signalOf(call));
  };
  const getPayment = async (paymentId: string, call?: RequestOptions): Promise<Payment> => {
    if (typeof paymentId !== 'string' || !PAYMENT_ID.test(paymentId)) {
      throw new ServiceInputError(
        'INVALID_PAYMENT_ID',
        `paymentId must be a payment identifier starting with "p_", got ${describe(paymentId)}.`,
        'paymentId',
      );
    }
    return send(o, 'GET', `/v1/payments/${paymentId}`, undefined, signalOf(call));
  };
  return { createPayment, getPayment };
}

function signalOf(call: RequestOptions | undefined): AbortSignal | undefined {
  const signal = call?.signal;
  if (signal === undefined) return undefined;
  if (signal === null || typeof signal !== 'object' || typeof signal.addEventListener !== 'function') {
    throw new ServiceInputError('INVALID_OPTIONS', `signal must be an AbortSignal, got ${describe(signal)}.`, 'signal');
  }
  return signal;
}

function resolveOptions(options: ServiceClientOptions): Resolved {
  const bad = (field: string, message: string) => new ServiceInputError('INVALID_OPTIONS', message, field);
  if (options === null || typeof options !== 'object') {
    throw bad('options', 'createServiceClient needs { baseUrl, apiKey, apiSecret }.');
  }
  let base: URL;
  try {
    base = new URL(options.baseUrl);
  } catch {
    throw bad('baseUrl', `baseUrl must be an absolute http:// or https:// URL, got ${describe(options.baseUrl)}.`);
  }
  if (base.protocol !== 'http:' && base.protocol !== 'https:') {
    throw bad('baseUrl', `baseUrl must be an http:// or https:// URL, got the scheme "${base.protocol}".`);
  }
  if (base.search !== '' || base.hash !== '')
    throw bad('baseUrl', 'baseUrl must not carry a query string or fragment.');
  if (typeof options.apiKey !== 'string' || options.apiKey.length === 0)
    throw bad('apiKey', 'apiKey must be a non-empty string.');
  if (typeof options.apiSecret !== 'string' || options.apiSecret.length === 0) {
    throw bad('apiSecret', 'apiSecret must be a non-empty string.');
  }
  const timeoutMs = timerMs(options.timeoutMs, DEFAULT_TIMEOUT_MS, 'timeoutMs', 1);
  const maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  if (!Number.isSafeInteger(maxResponseBytes) || maxResponseBytes < 1024) {
    throw bad(
      'maxResponseBytes',
      `maxResponseBytes must be a whole number of bytes >= 1024, got ${describe(maxResponseBytes)}.`,
    );
  }
  if (base.protocol === 'http:' && !isLoopback(base.hostname)) warnInsecure(base.origin);
  // The option of release 0.1; silently ignoring it would turn a user's "no retries" into retries.
  if ('maxNetworkRetries' in options) {
    throw bad('maxNetworkRetries', 'maxNetworkRetries was replaced by retry: { maxAttempts } (or retry: false).');
  }
  const retry = resolveRetry(options.retry);
  const custom = options.fetch;
  if (custom !== undefined && typeof custom !== 'function') throw bad('fetch', 'fetch must be a fetch function.');
  const now = options.now ?? Date.now;
  if (typeof now !== 'function')
    throw bad('now', `now must be a function returning milliseconds, got ${describe(now)}.`);
  // Signing validates the key's characters; doing it once here reports a bad key at construction.
  signApiRequest({ method: 'GET', path: '/', apiKey: options.apiKey, apiSecret: options.apiSecret, timestamp: 0 });
  return {
    origin: base.origin,
    prefix: withoutTrailingSlashes(base.pathname),
    apiKey: options.apiKey,
    apiSecret: options.apiSecret,
    fetch: custom,
    timeoutMs,
    maxResponseBytes,
    retry,
    now,
  };
}

/** One call: attempts, waits and the final error, all within the deadline. */
async function send(
  o: Resolved,
  method: Method,
  path: string,
  body: string | undefined,
  signal: AbortSignal | undefined,
): Promise<Payment> {
  const fullPath = `${o.prefix}${path}`;
  const what = `${method} ${fullPath}`;
  const startedAt = o.now();
  const deadline = o.retry === undefined ? Number.POSITIVE_INFINITY : startedAt + o.retry.deadlineMs;
  const history: AttemptFailure[] = [];
  for (let attempt = 1; ; attempt += 1) {
    if (signal?.aborted) {
      // Aborted before this attempt was sent: it does not count.
      throw finalError(what, { kind: 'aborted', reason: signal.reason }, history, attempt - 1, undefined, o, startedAt);
    }
    const limitMs = Math.max(1, Math.min(o.timeoutMs, Math.ceil(deadline - o.now())));
    const result = await sendOnce(o, method, fullPath, body, limitMs, signal);
    if (result.ok) return result.payment;
    const { failure } = result;
    history.push(failure);
    const decision = decideRetry(o.retry, { method, failure, attempt, remainingMs: deadline - o.now() });
    if ('stop' in decision) throw finalError(what, failure, history, attempt, decision.stop, o, startedAt);
    await o.retry!.sleep(decision.retryInMs, signal);
  }
}

/** Sends one signed request; never throws for a failure the retry loop has to judge. */
async function sendOnce(
  o: Resolved,
  method: Method,
  fullPath: string,
  body: string | undefined,
  limitMs: number,
  signal: AbortSignal | undefined,
): Promise<AttemptResult> {
  // Looked up per call, so a fetch installed or instrumented after construction is used.
  const fetchImpl = o.fetch ?? globalThis.fetch;
  if (typeof fetchImpl !== 'function') {
    throw new ServiceInputError(
      'INVALID_OPTIONS',
      'No fetch available: pass options.fetch on runtimes without a global fetch.',
      'fetch',
    );
  }
  const controller = new AbortController();
  // One timer for the whole answer: a server that sends headers and then stalls the body is a timeout too.
  const timer = setTimeout(() => controller.abort(), limitMs);
  const onAbort = () => controller.abort();
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    // Signed for every attempt: a retry after a long Retry-After must not carry a stale timestamp.
    const authorization = signApiRequest({
      method,
      path: fullPath,
      body,
      apiKey: o.apiKey,
      apiSecret: o.apiSecret,
      timestamp: Math.floor(o.now() / 1000),
    });
    let response: Response;
    let text: string;
    try {
      response = await fetchImpl(`${o.origin}${fullPath}`, {
        method,
        headers: { accept: 'application/json', 'content-type': 'application/json', authorization },
        body: body ?? null,
        signal: controller.signal,
        // Followed, a 307 to another origin re-sent the order there (fetch drops only Authorization).
        redirect: 'manual',
      });
      if (isRedirect(response)) {
        await response.body?.cancel().catch(() => undefined);
        const failure = redirectFailure(response, `${method} ${fullPath}`, o.origin, authorization);
        return { ok: false, failure };
      }
      const read = await readCapped(response, o.maxResponseBytes);
      if (read === undefined) {
        const message = `${method} ${fullPath} answered ${response.status} with a body over maxResponseBytes (${o.maxResponseBytes} bytes); it was not read.`;
        return {
          ok: false,
          failure: {
            kind: 'http',
            status: response.status,
            code: 'RESPONSE_TOO_LARGE',
            message,
            retryAfterMs: undefined,
          },
        };
      }
      text = read;
    } catch (error) {
      if (signal?.aborted) return { ok: false, failure: { kind: 'aborted', reason: signal.reason } };
      if (controller.signal.aborted) return { ok: false, failure: { kind: 'timeout', limitMs } };
      return { ok: false, failure: { kind: 'network', cause: error, notSent: provablyNotSent(error) } };
    }
    if (!response.ok) {
      const retryAfterMs = parseRetryAfter(response.headers.get('retry-after'), o.now());
      const { code, message } = apiErrorBody(text, response.status, `${method} ${fullPath}`, authorization);
      return { ok: false, failure: { kind: 'http', status: response.status, code, message, retryAfterMs } };
    }
    const payment = toPayment(text);
    if (payment === undefined) {
      const message = `${method} ${fullPath} answered ${response.status}, but the body is not a payment (JSON with paymentId and status).`;
      return {
        ok: false,
        failure: { kind: 'http', status: response.status, code: 'INVALID_RESPONSE', message, retryAfterMs: undefined },
      };
    }
    return { ok: true, payment };
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
  }
}

/** The error of a call: the class of the last failure, with the attempts made and, after retries, why each failed. */
function finalError(
  what: string,
  failure: AttemptFailure,
  history: readonly AttemptFailure[],
  attempts: number,
  stopReason: string | undefined,
  o: Resolved,
  startedAt: number,
): ServiceError {
  let note: string | undefined;
  // An abort between attempts is not one of them: the history ends with the attempt before it.
  const abortedWhileWaiting = failure.kind === 'aborted' && history.length > 0 && history.at(-1) !== failure;
  const reason = abortedWhileWaiting ? 'aborted while waiting to retry' : stopReason;
  if (history.length > 1 || abortedWhileWaiting) {
    const list = history.map((f, i) => `${i + 1}) ${summarizeFailure(f)}`).join(', ');
    const elapsed = Math.max(0, Math.round(o.now() - startedAt));
    note = `(${attempts} attempt${attempts === 1 ? '' : 's'} in ${elapsed} ms: ${list}${reason ? `; ${reason}` : ''})`;
  } else if (stopReason !== undefined) {
    note = `(${stopReason})`;
  }
  const options = { attempts, note };
  switch (failure.kind) {
    case 'http':
      return new ServiceApiError(failure.status, failure.code, failure.message, options);
    case 'network':
      return new ServiceNetworkError(what, failure.cause, options);
    case 'timeout':
      return new ServiceTimeoutError(failure.limitMs, what, options);
    case 'aborted':
      return new ServiceAbortError(what, failure.reason, options);
  }
}

/**
 * The body as text, or undefined when it is longer than `max` bytes: the declared length is checked first,
 * then the stream is read chunk by chunk and cancelled as soon as it passes the limit.
 */
async function readCapped(response: Response, max: number): Promise<string | undefined> {
  const declared = Number(response.headers.get('content-length'));
  if (declared > max) {
    await response.body?.cancel().catch(() => undefined);
    return undefined;
  }
  if (response.body === null) return '';
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  let size = 0;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return text + decoder.decode();
    size += value.byteLength;
    if (size > max) {
      await reader.cancel().catch(() => undefined);
      return undefined;
    }
    text += decoder.decode(value, { stream: true });
  }
}

/** A 3xx, or what a browser's fetch makes of one under `redirect: 'manual'` (status 0, no headers). */
function isRedirect(response: Response): boolean {
  return response.type === 'opaqueredirect' || (response.status >= 300 && response.status <= 399);
}

/**
 * A redirect is never followed, to another origin or not: the merchant API has fixed paths, the request
 * is signed over its path, and a redirect elsewhere would hand a signed order to a server not configured
 * as `baseUrl`. The message names where it pointed (its origin only, and only if it parses).
 */
function redirectFailure(response: Response, what: string, origin: string, authorization: string): AttemptFailure {
  let target = 'somewhere the runtime does not show';
  const location = response.headers.get('location');
  if (location !== null) {
    try {
      const to = new URL(location, origin).origin;
      target = to === origin ? `the same origin (${to})` : `another origin (${printable(to, authorization)})`;
    } catch {
      target = 'an unparseable Location';
    }
  }
  const message = `${what} answered ${response.status} redirecting to ${target}; the client follows no redirects. Check baseUrl (https://, the service's own host).`;
  return { kind: 'http', status: response.status, code: 'REDIRECT_REFUSED', message, retryAfterMs: undefined };
}

function isLoopback(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(hostname);
}

/** Plain http to another machine sends signed requests and payment data readable on the way: say so, once. */
function warnInsecure(origin: string): void {
  if (warnedInsecure.has(origin)) return;
  warnedInsecure.add(origin);
  const message = `@service-pay/client: baseUrl ${origin} is plain http to another machine; payments and signed requests travel unencrypted. Use https:// (http:// is for a local simulator).`;
  const proc = (globalThis as { process?: { emitWarning?: (m: string, o: { code: string }) => void } }).process;
  if (typeof proc?.emitWarning === 'function') proc.emitWarning(message, { code: 'SERVICE_PAY_INSECURE_BASE_URL' });
  else console.warn(message);
}

/**
 * Server text made safe to print: control characters (newlines, escapes) become spaces; at most 500
 * characters. The request's own `Authorization` value and its signature, which a server may echo, become
 * `[redacted]` before the cut (so no prefix of them is left); text that still spells the signature once
 * its other characters are dropped (split by spaces or control characters) is not shown at all.
 */
function printable(text: string, authorization: string): string {
  const redacted = redact(text, authorization);
  // biome-ignore lint/suspicious/noControlCharactersInRegex: replacing them is the point (forged log lines).
  const clean = redacted.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, ' ').trim();
  if (spellsSignature(clean, authorization)) return "[not shown: it spelled this request's signature]";
  return clean.length > 500 ? `${clean.slice(0, 500)}...` : clean;
}

/** `text` without the Authorization value or its signature, in any letter case. */
function redact(text: string, authorization: string): string {
  let out = text;
  for (const secret of [authorization, signatureOf(authorization)]) {
    out = out.replace(new RegExp(secret.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&'), 'gi'), '[redacted]');
  }
  return out;
}

/** Whether the hex digits of `text`, in order, contain the signature (hex, 64 digits). */
function spellsSignature(text: string, authorization: string): boolean {
  return text
    .replace(/[^0-9a-f]/gi, '')
    .toLowerCase()
    .includes(signatureOf(authorization).toLowerCase());
}

const signatureOf = (authorization: string) => authorization.slice(authorization.lastIndexOf('=') + 1);

/** The spec's error body `{ error, message }`, or `HTTP_ERROR` with an excerpt of whatever came instead. */
function apiErrorBody(
  text: string,
  status: number,
  what: string,
  authorization: string,
): { code: string; message: string } {
  let parsed: unknown;
  try {
    parsed = parseJson(text);
  } catch {
    // Not the spec's error body: a proxy or load balancer answered. Keep a little of it for the log.
  }
  const body = parsed as { error?: unknown; message?: unknown } | undefined;
  // The code is what callers branch on: only a plain identifier is taken as one.
  // A code that carries the signature is no code: the body is then reported as an excerpt, redacted.
  if (
    body !== null &&
    typeof body === 'object' &&
    typeof body.error === 'string' &&
    CODE.test(body.error) &&
    redact(body.error, authorization) === body.error &&
    !spellsSignature(body.error, authorization)
  ) {
    const message =
      typeof body.message === 'string' && printable(body.message, authorization).length > 0
        ? printable(body.message, authorization)
        : `${what} failed with ${body.error}.`;
    return { code: body.error, message };
  }
  const redacted = redact(text, authorization);
  const excerpt = printable(redacted.length > 200 ? `${redacted.slice(0, 200)}...` : redacted, authorization);
  return {
    code: 'HTTP_ERROR',
    message: `${what} answered ${status} without an error body${excerpt ? `: ${excerpt}` : '.'}`,
  };
}

function toPayment(text: string): Payment | undefined {
  let p: Partial<Payment> | null = null;
  try {
    p = parseJson(text) as Partial<Payment> | null;
  } catch {
    // Reported by the caller with the same code as any other body that is not a payment.
  }
  if (p === null || typeof p !== 'object' || typeof p.paymentId !== 'string' || typeof p.status !== 'string') {
    return undefined;
  }
  return p as Payment;
}

/**
 * JSON.parse without the keys `__proto__`, `constructor` and `prototype` (also written with `\u` escapes),
 * as the webhook path parses: never a payment field, and an own `__proto__` on a returned payment would
 * surprise code that spreads or merges it. The reviver costs a call per value, so it runs only when the
 * text could hold one of them.
 */
function parseJson(text: string): unknown {
  const mayHoldReservedKey =
    text.includes('__proto__') || text.includes('constructor') || text.includes('prototype') || text.includes('\\u');
  return mayHoldReservedKey ? JSON.parse(text, dropReservedKeys) : JSON.parse(text);
}

function dropReservedKeys(key: string, value: unknown): unknown {
  return key === '__proto__' || key === 'constructor' || key === 'prototype' ? undefined : value;
}

/**
 * `path` without its trailing slashes. A loop from the end, not `/\/+$/`: that RegExp retries from every
 * slash of a long run that does not end the path (`//...//x`), quadratic in the run's length.
 */
function withoutTrailingSlashes(path: string): string {
  let end = path.length;
  while (end > 0 && path.charCodeAt(end - 1) === 0x2f) end--;
  return end === path.length ? path : path.slice(0, end);
}
