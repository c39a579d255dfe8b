/**
 * Why a payment input was refused: the same codes `@service-pay/client` uses for the shapes it checks, so a
 * problem reads the same whether the client or the simulator caught it.
 *
 * @example
 * ```ts
 * const code: PaymentInputErrorCode = 'INVALID_ORDER_NO';
 * ```
 */
export type PaymentInputErrorCode =
  | 'INVALID_BODY'
  | 'INVALID_ORDER_NO'
  | 'INVALID_TOKEN_SYMBOL'
  | 'INVALID_AMOUNT'
  | 'INVALID_EXPIRE_SEC'
  | 'INVALID_NOTIFY_URL';

/**
 * Every code the simulator answers or throws. The merchant API codes (first group) are what a client sees
 * in `{"error": CODE, "message": "..."}` bodies; the rest belong to the control API and the programmatic
 * helpers.
 *
 * @example
 * ```ts
 * if (err instanceof SimulatorError && err.code === 'PAYMENT_EXPIRED') console.log('create a new payment');
 * ```
 */
export type SimulatorErrorCode =
  | 'UNAUTHORIZED'
  | PaymentInputErrorCode
  | 'INVALID_JSON'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'BODY_TOO_LARGE'
  | 'DUPLICATE_ORDER_NO'
  | 'PAYMENT_NOT_FOUND'
  | 'RATE_LIMITED'
  | 'SERVICE_UNAVAILABLE'
  | 'NOT_FOUND'
  | 'METHOD_NOT_ALLOWED'
  | 'INTERNAL_ERROR'
  | 'INVALID_OPTIONS'
  | 'INVALID_PAY_OPTIONS'
  | 'INVALID_FAULTS'
  | 'INVALID_AMENDMENT'
  | 'INVALID_API_FAULT'
  | 'FORBIDDEN_ORIGIN'
  | 'FORBIDDEN_HOST'
  | 'CONTROL_TOKEN_REQUIRED'
  | 'PAYMENT_CONFIRMING'
  | 'PAYMENT_EXPIRED'
  | 'PAYMENT_ALREADY_PAID'
  | 'PAYMENT_NOT_PAID'
  | 'DELIVERY_NOT_FOUND'
  | 'IDLE_TIMEOUT'
  | 'PORT_IN_USE'
  | 'SIMULATOR_STOPPED';

/**
 * The one table from code to HTTP status.
 *
 * @example
 * ```ts
 * SIMULATOR_STATUS_BY_CODE.DUPLICATE_ORDER_NO; // 409
 * ```
 */
export const SIMULATOR_STATUS_BY_CODE: Readonly<Record<SimulatorErrorCode, number>> = Object.freeze({
  UNAUTHORIZED: 401,
  INVALID_BODY: 400,
  INVALID_ORDER_NO: 400,
  INVALID_TOKEN_SYMBOL: 400,
  INVALID_AMOUNT: 400,
  INVALID_EXPIRE_SEC: 400,
  INVALID_NOTIFY_URL: 400,
  INVALID_JSON: 400,
  UNSUPPORTED_MEDIA_TYPE: 415,
  BODY_TOO_LARGE: 413,
  DUPLICATE_ORDER_NO: 409,
  PAYMENT_NOT_FOUND: 404,
  RATE_LIMITED: 429,
  SERVICE_UNAVAILABLE: 503,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  INTERNAL_ERROR: 500,
  INVALID_OPTIONS: 400,
  INVALID_PAY_OPTIONS: 400,
  INVALID_FAULTS: 400,
  INVALID_AMENDMENT: 400,
  INVALID_API_FAULT: 400,
  FORBIDDEN_ORIGIN: 403,
  FORBIDDEN_HOST: 403,
  CONTROL_TOKEN_REQUIRED: 401,
  PAYMENT_CONFIRMING: 409,
  PAYMENT_EXPIRED: 409,
  PAYMENT_ALREADY_PAID: 409,
  PAYMENT_NOT_PAID: 409,
  DELIVERY_NOT_FOUND: 404,
  IDLE_TIMEOUT: 504,
  PORT_IN_USE: 500,
  SIMULATOR_STOPPED: 503,
});

const BRAND = Symbol.for('@service-pay/simulator/SimulatorError');

/**
 * What the simulator's helpers throw and its control API answers with: a stable `code`, the HTTP
 * `status` that goes with it, and a message that says how to fix the call.
 *
 * @example
 * ```ts
 * try {
 *   await sim.pay(paymentId);
 * } catch (err) {
 *   if (err instanceof SimulatorError && err.code === 'PAYMENT_EXPIRED') console.log('too late');
 *   else throw err;
 * }
 * ```
 */
export class SimulatorError extends Error {
  // A brand instead of prototype identity: the ESM and CJS builds loaded together must agree.
  static override [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
  }
  override readonly name = 'SimulatorError';
  readonly code: SimulatorErrorCode;
  readonly status: number;

  constructor(code: SimulatorErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.status = SIMULATOR_STATUS_BY_CODE[code];
  }
}

Object.defineProperty(SimulatorError.prototype, BRAND, { value: true });
