import { describe } from './describe-value.js';
import { describeCause, ServiceInputError } from './errors.js';
import { timerMs } from './timer-ms.js';

/**
 * How `createServiceClient` retries a failed request. Every field is optional; `retry: false` turns
 * retrying off. Waits use exponential backoff with full jitter: before retry n the client waits a random
 * time in `[0, min(maxDelayMs, baseDelayMs * 2^(n-1))]`, or exactly what a `Retry-After` answer asks.
 *
 * @example
 * ```ts
 * const client = createServiceClient({
 *   baseUrl, apiKey, apiSecret,
 *   retry: { maxAttempts: 5, baseDelayMs: 200, maxDelayMs: 5_000, deadlineMs: 20_000 },
 * });
 * ```
 */
export interface RetryOptions {
  /** Requests in all, the first included. Default 3 (two retries); 1 turns retrying off. */
  maxAttempts?: number | undefined;
  /** Upper bound of the first wait; it doubles for each further retry. Default 500 ms. */
  baseDelayMs?: number | undefined;
  /** Upper bound of any backoff wait. Default 8 000 ms. `Retry-After` is bounded by `deadlineMs` instead. */
  maxDelayMs?: number | undefined;
  /**
   * Time for a whole call: every attempt and every wait. An attempt gets what is left of it when that is
   * less than `timeoutMs`; a wait that would end past it is not taken. Default 30 000 ms; at most
   * 2,147,483,647 (what a timer holds), `Infinity` for no deadline of its own (held at that maximum).
   */
  deadlineMs?: number | undefined;
  /** Source of the jitter, a number in [0, 1). Default `Math.random`. */
  random?: (() => number) | undefined;
  /** How to wait between attempts (for tests). Default a timer that the call's `signal` cuts short. */
  sleep?: ((ms: number, signal: AbortSignal | undefined) => Promise<void>) | undefined;
}

/** A retry policy with every default filled in. */
export interface RetryPolicy {
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  deadlineMs: number;
  random: () => number;
  sleep: (ms: number, signal: AbortSignal | undefined) => Promise<void>;
}

/**
 * The defaults of `RetryOptions`: three attempts within 30 s, first wait up to 500 ms. Close to what
 * Stripe's and OpenAI's SDKs do (two retries, 0.5 s doubling), plus a deadline so that a call made while
 * a customer waits has a known worst case.
 *
 * @example
 * ```ts
 * const patient = { ...RETRY_DEFAULTS, maxAttempts: 6, deadlineMs: 120_000 };
 * ```
 */
export const RETRY_DEFAULTS = Object.freeze({
  maxAttempts: 3,
  baseDelayMs: 500,
  maxDelayMs: 8_000,
  deadlineMs: 30_000,
});

/**
 * Why one attempt failed, before it is turned into an error. `http` covers every answer that is not a
 * payment, a 2xx that is not a payment included (status 2xx, code `INVALID_RESPONSE`).
 */
export type AttemptFailure =
  | { kind: 'http'; status: number; code: string; message: string; retryAfterMs: number | undefined }
  | { kind: 'network'; cause: unknown; notSent: boolean }
  | { kind: 'timeout'; limitMs: number }
  | { kind: 'aborted'; reason: unknown };

/** What to do after a failed attempt: wait and retry, or stop (with a reason when one is worth saying). */
export type RetryDecision = { retryInMs: number } | { stop: string | undefined };

const OPTION_NAMES = new Set(['maxAttempts', 'baseDelayMs', 'maxDelayMs', 'deadlineMs', 'random', 'sleep']);

/** Validates `retry` and fills in the defaults; `undefined` when retrying is off. */
export function resolveRetry(retry: RetryOptions | boolean | undefined): RetryPolicy | undefined {
  if (retry === false) return undefined;
  const given: RetryOptions = retry === undefined || retry === true ? {} : retry;
  const bad = (field: string, message: string) => new ServiceInputError('INVALID_OPTIONS', message, `retry.${field}`);
  if (given === null || typeof given !== 'object' || Array.isArray(given)) {
    throw new ServiceInputError(
      'INVALID_OPTIONS',
      `retry must be false or an object such as { maxAttempts: 3 }, got ${describe(given)}.`,
      'retry',
    );
  }
  for (const key of Object.keys(given)) {
    if (!OPTION_NAMES.has(key)) {
      throw bad(key, `retry has no option "${key}"; the options are ${[...OPTION_NAMES].join(', ')}.`);
    }
  }
  const whole = (field: keyof typeof RETRY_DEFAULTS, min: number) => {
    const value = given[field] ?? RETRY_DEFAULTS[field];
    if (!Number.isSafeInteger(value) || value < min) {
      throw bad(field, `retry.${field} must be a whole number >= ${min}, got ${describe(value)}.`);
    }
    return value;
  };
  const fn = <T>(field: 'random' | 'sleep', fallback: T): T => {
    const value = given[field];
    if (value === undefined) return fallback;
    if (typeof value !== 'function') throw bad(field, `retry.${field} must be a function, got ${describe(value)}.`);
    return value as T;
  };
  return {
    maxAttempts: whole('maxAttempts', 1),
    // Each bounds a wait the sleep's timer takes: the backoff by maxDelayMs, a Retry-After by deadlineMs.
    baseDelayMs: timerMs(given.baseDelayMs, RETRY_DEFAULTS.baseDelayMs, 'retry.baseDelayMs', 0),
    maxDelayMs: timerMs(given.maxDelayMs, RETRY_DEFAULTS.maxDelayMs, 'retry.maxDelayMs', 0),
    deadlineMs: timerMs(given.deadlineMs, RETRY_DEFAULTS.deadlineMs, 'retry.deadlineMs', 1, true),
    random: fn('random', Math.random),
    sleep: fn('sleep', timerSleep),
  };
}

/**
 * The backoff wait before retry `retry` (1 for the first): full jitter, a uniform draw in
 * `[0, min(maxDelayMs, baseDelayMs * 2^(retry-1))]`. Full jitter spreads clients that failed together
 * (one outage, many reconcilers) instead of sending them back in step.
 *
 * @example
 * ```ts
 * backoffDelayMs(3, { baseDelayMs: 500, maxDelayMs: 8_000 }, () => 0.5); // 1000: half of min(8000, 2000)
 * ```
 */
export function backoffDelayMs(
  retry: number,
  policy: Pick<RetryPolicy, 'baseDelayMs' | 'maxDelayMs'>,
  random: () => number,
): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (retry - 1));
  const draw = random();
  // A random source that strays out of [0, 1) must not make a negative or oversized wait.
  const unit = Number.isFinite(draw) ? Math.min(Math.max(draw, 0), 1) : 0;
  return Math.floor(unit * ceiling);
}

/**
 * Reads `Retry-After` (RFC 9110 10.2.3): delay-seconds or an HTTP date, as milliseconds from `nowMs`.
 * A date in the past means 0; anything unreadable means `undefined` (the backoff applies).
 *
 * @example
 * ```ts
 * parseRetryAfter('2', Date.now()); // 2000
 * parseRetryAfter('Wed, 21 Oct 2015 07:28:00 GMT', Date.parse('Wed, 21 Oct 2015 07:27:00 GMT')); // 60000
 * ```
 */
export function parseRetryAfter(value: string | null | undefined, nowMs: number): number | undefined {
  if (value === null || value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  // An HTTP date starts with a weekday and ends in GMT; Date.parse alone would accept "-5" or "2025".
  if (!/^[A-Za-z]{3,9}, .+ GMT$/.test(text)) return undefined;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}

// 501 Not Implemented and 505 HTTP Version Not Supported: the server never will, so no retry can help,
// and it did nothing with the request.
const UNSUPPORTED = new Set([501, 505]);

/**
 * Whether a failed attempt may be sent again. Reads are always safe to repeat. `createPayment` (the only
 * POST) has no idempotency key in the spec, so it is repeated only when the service provably did not
 * take it: no connection was made, a 429 (refused by rate limiting), or a 503 with `Retry-After` (the
 * service itself asking to come back; a bare 503 may be a proxy that lost the answer of a request the
 * service did take).
 */
export function isRetryable(method: 'GET' | 'POST', failure: AttemptFailure): boolean {
  switch (failure.kind) {
    case 'aborted':
      return false;
    case 'network':
      return method === 'GET' || failure.notSent;
    case 'timeout':
      return method === 'GET';
    case 'http':
      if (failure.status === 429) return true;
      if (method === 'POST') return failure.status === 503 && failure.retryAfterMs !== undefined;
      return failure.status >= 500 && failure.status <= 599 && !UNSUPPORTED.has(failure.status);
  }
}

/**
 * After attempt `attempt` failed with `failure`, with `remainingMs` left of the deadline: the wait before
 * the next attempt, or why there is none.
 *
 * @example
 * ```ts
 * decideRetry(policy, { method: 'GET', failure, attempt: 1, remainingMs: 29_000 }); // { retryInMs: 312 }
 * ```
 */
export function decideRetry(
  policy: RetryPolicy | undefined,
  input: { method: 'GET' | 'POST'; failure: AttemptFailure; attempt: number; remainingMs: number },
): RetryDecision {
  const { method, failure, attempt, remainingMs } = input;
  if (!isRetryable(method, failure)) {
    // A POST that got no answer, or a 5xx, may have created the payment; a 4xx answer says it did not.
    const ambiguous =
      method === 'POST' && !(failure.kind === 'http' && (failure.status < 500 || UNSUPPORTED.has(failure.status)));
    return {
      stop: ambiguous
        ? 'not sent again: the service may have created the payment; see Retries in the client README'
        : undefined,
    };
  }
  if (policy === undefined) return { stop: undefined };
  if (attempt >= policy.maxAttempts) return { stop: `maxAttempts (${policy.maxAttempts}) reached` };
  if (remainingMs <= 0) return { stop: `deadlineMs (${policy.deadlineMs}) reached` };
  const retryAfterMs = failure.kind === 'http' ? failure.retryAfterMs : undefined;
  if (retryAfterMs !== undefined) {
    // The server's word beats our backoff; waiting less would only earn another refusal.
    if (retryAfterMs >= remainingMs) {
      return { stop: `Retry-After asked for ${retryAfterMs} ms, past deadlineMs (${policy.deadlineMs})` };
    }
    return { retryInMs: retryAfterMs };
  }
  const delay = backoffDelayMs(attempt, policy, policy.random);
  if (delay >= remainingMs) return { stop: `the next wait (${delay} ms) would pass deadlineMs (${policy.deadlineMs})` };
  return { retryInMs: delay };
}

/** One attempt's failure in a few words, for the retry history in an error message. */
export function summarizeFailure(failure: AttemptFailure): string {
  switch (failure.kind) {
    case 'http':
      return `${failure.status} ${failure.code}`;
    case 'network':
      return `network error (${describeCause(failure.cause)})`;
    case 'timeout':
      return `no answer within ${failure.limitMs} ms`;
    case 'aborted':
      return 'aborted';
  }
}

// Connection-stage failures: the request was never written to a socket, so the service cannot have
// acted on it. Codes from Node's net/dns and undici's connector.
const NOT_SENT = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/** Whether a fetch rejection proves the request never left: every error in its cause chain is a connect failure. */
export function provablyNotSent(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current instanceof Error; depth += 1) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return NOT_SENT.has(code);
    // Happy eyeballs: one error per address tried, all of which must be connect failures.
    if (current instanceof AggregateError && current.errors.length > 0) return current.errors.every(provablyNotSent);
    current = current.cause;
  }
  return false;
}

/** The default wait: a timer that resolves early (without throwing) when the signal aborts; the caller checks the signal. */
export function timerSleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) {
      resolve();
      return;
    }
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}
