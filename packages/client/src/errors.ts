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

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

/**
 * The service answered with a non-2xx status. `code` and `message` come from the spec's error body
 * `{"error": CODE, "message": "..."}`; when the body is not of that shape, `code` is `HTTP_ERROR`. A 2xx
 * answer that is not a payment gives `INVALID_RESPONSE`. `verifyApiRequest` throws it too, with status 401
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

  constructor(status: number, code: string, message: string, options?: { cause?: unknown }) {
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
    super(code, message);
    this.field = field;
    this.problems = problems;
  }
}

/**
 * No complete answer arrived within `timeoutMs`. A GET was retried first; a POST never is, so after a
 * timeout on `createPayment` the payment may or may not exist: look it up by your order number before
 * creating it again.
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

  constructor(timeoutMs: number, what: string) {
    super('TIMEOUT', `${what} got no complete answer within ${timeoutMs} ms (timeoutMs).`);
    this.timeoutMs = timeoutMs;
  }
}

/**
 * The request failed below HTTP: refused connection, DNS failure, reset socket. `cause` holds the
 * runtime's error. As with a timeout, a failed POST may have reached the service.
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

  constructor(what: string, cause: unknown) {
    super('NETWORK_ERROR', `${what} failed before an answer arrived: ${describeCause(cause)}`, { cause });
  }
}

function describeCause(cause: unknown): string {
  // undici wraps the socket error: `TypeError('fetch failed', { cause: Error('connect ECONNREFUSED ...') })`.
  const inner = (cause as { cause?: unknown } | undefined)?.cause;
  const source = inner instanceof Error ? inner : cause;
  return source instanceof Error ? source.message : String(source);
}

for (const [type, kinds] of [
  [ServiceError, ['ServiceError']],
  [ServiceApiError, ['ServiceError', 'ServiceApiError']],
  [ServiceInputError, ['ServiceError', 'ServiceInputError']],
  [ServiceTimeoutError, ['ServiceError', 'ServiceTimeoutError']],
  [ServiceNetworkError, ['ServiceError', 'ServiceNetworkError']],
] as const) {
  Object.defineProperty(type.prototype, KINDS, { value: kinds });
}
