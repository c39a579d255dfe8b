import type { PaymentInputCode, PaymentInputProblem } from './check-payment-input.js';

const KINDS = Symbol.for('@service-pay/client/error-kinds');

/**
 * Base of every error this package throws. Catch it to handle all of them; read `code` for the reason.
 *
 * @example
 * ```ts
 * try {
 *   await client.getPayment(paymentId);
 * } catch (err) {
 *   if (err instanceof ServiceError) console.error(err.code, err.message);
 *   else throw err;
 * }
 * ```
 */
export class ServiceError extends Error {
  // A brand instead of prototype identity alone: with both the ESM and CJS builds (or two installed
  // copies) loaded, `instanceof` must still recognise an error made by the other copy.
  static override [Symbol.hasInstance](value: unknown): boolean {
    // biome-ignore lint/complexity/noThisInStatic: `this` is the subclass being tested (ServiceApiError, ...).
    if (Function.prototype[Symbol.hasInstance].call(this, value)) return true;
    const kinds = typeof value === 'object' && value !== null ? (value as Record<symbol, unknown>)[KINDS] : undefined;
    // biome-ignore lint/complexity/noThisInStatic: as above, the class on the right of `instanceof`.
    return Array.isArray(kinds) && kinds.includes(this.name);
  }
  override readonly name: string = 'ServiceError';
  /** Stable machine-readable reason. */
  readonly code: string;
  /**
   * How many requests were sent before this error: 0 when it was refused before sending, 1 for an answer
   * that was not retried, more after retries (the message then lists why each attempt failed).
   */
  readonly attempts: number;

  constructor(code: string, message: string, options?: ServiceErrorOptions) {
    super(withNote(message, options?.note), options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.attempts = options?.attempts ?? 1;
  }
}

/**
 * What every `ServiceError` constructor takes besides its own fields.
 *
 * @example
 * ```ts
 * const error = new ServiceApiError(503, 'HTTP_ERROR', 'unavailable', { attempts: 3 });
 * ```
 */
export interface ServiceErrorOptions {
  cause?: unknown;
  /** Requests sent; default 1. */
  attempts?: number | undefined;
  /** Appended to the message: the retry history, or why a request was not sent again. */
  note?: string | undefined;
}

function withNote(message: string, note: string | undefined): string {
  return note === undefined || note === '' ? message : `${message} ${note}`;
}

/**
 * The service answered with a non-2xx status. `code` and `message` come from the spec's error body
 * `{"error": CODE, "message": "..."}`; when the body is not of that shape, `code` is `HTTP_ERROR`. A 2xx
 * answer that is not a payment gives `INVALID_RESPONSE`, one over `maxResponseBytes` `RESPONSE_TOO_LARGE`, a
 * redirect (never followed) `REDIRECT_REFUSED`. `verifyApiRequest` throws it too, with status 401
 * and code `UNAUTHORIZED`, so a server can answer `{ error: err.code, message: err.message }` with
 * `err.status`.
 *
 * @example
 * ```ts
 * try {
 *   await client.createPayment(input);
 * } catch (err) {
 *   if (err instanceof ServiceApiError && err.code === 'UNAUTHORIZED') console.error('check the API key and secret');
 *   else throw err;
 * }
 * ```
 */
export class ServiceApiError extends ServiceError {
  override readonly name: string = 'ServiceApiError';
  /** HTTP status of the answer. */
  readonly status: number;

  constructor(status: number, code: string, message: string, options?: ServiceErrorOptions) {
    super(code, message, options);
    this.status = status;
  }
}

/**
 * Codes of `ServiceInputError`: a payment input problem, a malformed payment id, or bad options.
 *
 * @example
 * ```ts
 * const code: ServiceInputErrorCode = 'INVALID_PAYMENT_ID';
 * ```
 */
export type ServiceInputErrorCode = PaymentInputCode | 'INVALID_PAYMENT_ID' | 'INVALID_OPTIONS';

/**
 * The input was refused before anything was sent: a payment input that breaks the rules (see
 * `checkPaymentInput`), a malformed payment id, or invalid client or signing options.
 *
 * @example
 * ```ts
 * try {
 *   await client.createPayment({ ...input, amount: 12.5 as unknown as string });
 * } catch (err) {
 *   if (err instanceof ServiceInputError) console.error(err.code, err.field); // INVALID_AMOUNT amount
 * }
 * ```
 */
export class ServiceInputError extends ServiceError {
  override readonly name: string = 'ServiceInputError';
  declare readonly code: ServiceInputErrorCode;
  /** The offending field or option, when there is one. */
  readonly field: string | undefined;
  /** Every problem found, for payment input (the first one gives `code`, `field` and the message's start). */
  readonly problems: readonly PaymentInputProblem[];

  constructor(
    code: ServiceInputErrorCode,
    message: string,
    field?: string,
    problems: readonly PaymentInputProblem[] = [],
  ) {
    super(code, message, { attempts: 0 });
    this.field = field;
    this.problems = problems;
  }
}

/**
 * No complete answer arrived within `timeoutMs` (or within what was left of the retry deadline). A GET is
 * retried first; `createPayment` is not retried after a timeout (the service may have created the
 * payment), so after this error on `createPayment` the payment may or may not exist.
 *
 * @example
 * ```ts
 * try {
 *   await client.createPayment(input);
 * } catch (err) {
 *   if (err instanceof ServiceTimeoutError) console.warn(`no answer in ${err.timeoutMs} ms; the payment may exist`);
 * }
 * ```
 */
export class ServiceTimeoutError extends ServiceError {
  override readonly name: string = 'ServiceTimeoutError';
  declare readonly code: 'TIMEOUT';
  readonly timeoutMs: number;

  constructor(timeoutMs: number, what: string, options?: ServiceErrorOptions) {
    super('TIMEOUT', `${what} got no complete answer within ${timeoutMs} ms.`, options);
    this.timeoutMs = timeoutMs;
  }
}

/**
 * The request failed below HTTP: refused connection, DNS failure, reset socket. `cause` holds the
 * runtime's error. As with a timeout, a failed POST may have reached the service, unless the connection
 * was never made (then `createPayment` retries it).
 *
 * @example
 * ```ts
 * try {
 *   await client.getPayment(paymentId);
 * } catch (err) {
 *   if (err instanceof ServiceNetworkError) console.error('service unreachable:', err.message);
 * }
 * ```
 */
export class ServiceNetworkError extends ServiceError {
  override readonly name: string = 'ServiceNetworkError';
  declare readonly code: 'NETWORK_ERROR';

  constructor(what: string, cause: unknown, options?: ServiceErrorOptions) {
    super('NETWORK_ERROR', `${what} failed before an answer arrived: ${describeCause(cause)}`, { ...options, cause });
  }
}

/**
 * The caller's `signal` aborted the call (before sending, during a request, or while waiting to retry).
 * `cause` holds the signal's reason. An aborted `createPayment` may have reached the service.
 *
 * @example
 * ```ts
 * const payment = await client.getPayment(paymentId, { signal: AbortSignal.timeout(5_000) }).catch((err) => {
 *   if (err instanceof ServiceAbortError) return undefined; // gave up: try again on the next run
 *   throw err;
 * });
 * ```
 */
export class ServiceAbortError extends ServiceError {
  override readonly name: string = 'ServiceAbortError';
  declare readonly code: 'ABORTED';

  constructor(what: string, reason: unknown, options?: ServiceErrorOptions) {
    super('ABORTED', `${what} was aborted by the caller's signal.`, { ...options, cause: reason });
  }
}

/** A short reason for a failed request: the socket error's message, or its code when it has no message. */
export function describeCause(cause: unknown): string {
  // undici wraps the socket error: `TypeError('fetch failed', { cause: Error('connect ECONNREFUSED ...') })`.
  const inner = (cause as { cause?: unknown } | undefined)?.cause;
  const source = inner instanceof Error ? inner : cause;
  if (!(source instanceof Error)) return String(source);
  // An AggregateError (every address of a host refused) has an empty message but a code.
  const code = (source as { code?: unknown }).code;
  return source.message !== '' ? source.message : typeof code === 'string' ? code : source.name;
}

for (const [type, kinds] of [
  [ServiceError, ['ServiceError']],
  [ServiceApiError, ['ServiceError', 'ServiceApiError']],
  [ServiceInputError, ['ServiceError', 'ServiceInputError']],
  [ServiceTimeoutError, ['ServiceError', 'ServiceTimeoutError']],
  [ServiceNetworkError, ['ServiceError', 'ServiceNetworkError']],
  [ServiceAbortError, ['ServiceError', 'ServiceAbortError']],
] as const) {
  Object.defineProperty(type.prototype, KINDS, { value: kinds });
}
