import { type CreatePaymentInput, checkPaymentInput } from '@service-pay/client';
import { type PaymentInputErrorCode, SimulatorError } from './errors.js';

/**
 * The simulator's bounds on a payment input. The spec leaves them open ("not shown"), so the client only
 * checks shapes and the service decides; these are the simulator's, wide enough for real shops and narrow
 * enough to catch mistakes. Change them with the `limits` option of `startSimulator`.
 *
 * @example
 * ```ts
 * const sim = await startSimulator({ merchants, limits: { orderNoMaxLength: 32, expireSecMax: 3600 } });
 * sim.limits.orderNoMaxLength; // 32
 * ```
 */
export interface PaymentLimits {
  /** orderNo: 1 to this many printable ASCII characters without spaces. Default 64. */
  orderNoMaxLength: number;
  /** tokenSymbol: 1 to this many uppercase letters and digits, starting with a letter. Default 16. */
  tokenSymbolMaxLength: number;
  /** Digits before the decimal point of `amount`. Default 30. */
  amountMaxIntegerDigits: number;
  /** Digits after the decimal point of `amount` (a token's own decimals may allow fewer). Default 18. */
  amountMaxFractionDigits: number;
  /** Shortest lifetime in seconds. Default 1. */
  expireSecMin: number;
  /** Longest lifetime in seconds. Default 604800 (7 days). */
  expireSecMax: number;
  /** Longest notifyUrl. Default 2048. */
  notifyUrlMaxLength: number;
}

/**
 * The bounds in force when `limits` is left out.
 *
 * @example
 * ```ts
 * const limits = { ...DEFAULT_PAYMENT_LIMITS, expireSecMax: 3600 };
 * ```
 */
export const DEFAULT_PAYMENT_LIMITS: Readonly<PaymentLimits> = Object.freeze({
  orderNoMaxLength: 64,
  tokenSymbolMaxLength: 16,
  amountMaxIntegerDigits: 30,
  amountMaxFractionDigits: 18,
  expireSecMin: 1,
  expireSecMax: 604_800,
  notifyUrlMaxLength: 2048,
});

const LIMIT_MAX: Readonly<PaymentLimits> = Object.freeze({
  orderNoMaxLength: 1024,
  tokenSymbolMaxLength: 64,
  amountMaxIntegerDigits: 78,
  amountMaxFractionDigits: 36,
  expireSecMin: 315_576_000,
  expireSecMax: 315_576_000,
  notifyUrlMaxLength: 65_536,
});

/** Validates `limits` on top of the defaults; INVALID_OPTIONS names the bad one. */
export function resolveLimits(limits: Partial<PaymentLimits> | undefined): Readonly<PaymentLimits> {
  if (limits === undefined) return DEFAULT_PAYMENT_LIMITS;
  if (limits === null || typeof limits !== 'object' || Array.isArray(limits)) {
    throw new SimulatorError('INVALID_OPTIONS', 'limits must be an object such as { orderNoMaxLength: 32 }.');
  }
  const out = { ...DEFAULT_PAYMENT_LIMITS };
  for (const [key, value] of Object.entries(limits)) {
    if (!(key in DEFAULT_PAYMENT_LIMITS)) {
      throw new SimulatorError(
        'INVALID_OPTIONS',
        `Unknown limit "${key}"; known: ${Object.keys(DEFAULT_PAYMENT_LIMITS).join(', ')}.`,
      );
    }
    if (value === undefined) continue;
    const max = LIMIT_MAX[key as keyof PaymentLimits];
    if (!Number.isSafeInteger(value) || (value as number) < 1 || (value as number) > max) {
      throw new SimulatorError(
        'INVALID_OPTIONS',
        `limits.${key} must be a whole number from 1 to ${max}, got ${JSON.stringify(value)}.`,
      );
    }
    out[key as keyof PaymentLimits] = value as number;
  }
  if (out.expireSecMin > out.expireSecMax) {
    throw new SimulatorError('INVALID_OPTIONS', 'limits.expireSecMin must not be above limits.expireSecMax.');
  }
  return Object.freeze(out);
}

interface Problem {
  code: PaymentInputErrorCode;
  field: keyof CreatePaymentInput | undefined;
  message: string;
}

const FIELDS: readonly (keyof CreatePaymentInput)[] = ['orderNo', 'tokenSymbol', 'amount', 'expireSec', 'notifyUrl'];

/**
 * Checks a payment input as the service does: first the shapes the spec states (the client's own
 * `checkPaymentInput`, so both sides speak alike), then, for each field whose shape is right, the
 * simulator's bounds. Throws the first problem's code with every problem in the message.
 */
export function assertPaymentInput(input: unknown, limits: Readonly<PaymentLimits>): CreatePaymentInput {
  const shape = checkPaymentInput(input) as Problem[];
  if (shape.some((p) => p.field === undefined)) throwProblems(shape);
  const bounds = boundProblems(input as Record<string, unknown>, limits);
  // One problem per field, in field order: the shape's when there is one, else the bound's.
  const problems = FIELDS.flatMap(
    (field) => shape.find((p) => p.field === field) ?? bounds.find((p) => p.field === field) ?? [],
  );
  if (problems.length > 0) throwProblems(problems);
  return input as CreatePaymentInput;
}

function throwProblems(problems: Problem[]): never {
  const [first, ...rest] = problems as [Problem, ...Problem[]];
  const more = rest.length > 0 ? ` Also: ${rest.map((p) => p.message).join(' ')}` : '';
  throw new SimulatorError(first.code, `${first.message}${more}`);
}

/** The bounds of each field (its type included, so nothing depends on how much the shape check covers). */
export function boundProblems(input: Record<string, unknown>, L: Readonly<PaymentLimits>): Problem[] {
  const { orderNo, tokenSymbol, amount, expireSec, notifyUrl } = input;
  const problems: Problem[] = [];
  const add = (code: PaymentInputErrorCode, field: keyof CreatePaymentInput, message: string) => {
    problems.push({ code, field, message });
  };
  if (typeof orderNo !== 'string' || !isPrintableAscii(orderNo, L.orderNoMaxLength)) {
    add(
      'INVALID_ORDER_NO',
      'orderNo',
      `orderNo must be a string of 1 to ${L.orderNoMaxLength} printable ASCII characters without spaces, got ${describe(orderNo)}.`,
    );
  }
  if (typeof tokenSymbol !== 'string' || !isTokenSymbol(tokenSymbol, L.tokenSymbolMaxLength)) {
    add(
      'INVALID_TOKEN_SYMBOL',
      'tokenSymbol',
      `tokenSymbol must be 1 to ${L.tokenSymbolMaxLength} uppercase letters and digits starting with a letter, such as "USDT", got ${describe(tokenSymbol)}.`,
    );
  }
  const amountProblem = amountBoundProblem(amount, L);
  if (amountProblem !== undefined) add('INVALID_AMOUNT', 'amount', amountProblem);
  if (
    !Number.isSafeInteger(expireSec) ||
    (expireSec as number) < L.expireSecMin ||
    (expireSec as number) > L.expireSecMax
  ) {
    add(
      'INVALID_EXPIRE_SEC',
      'expireSec',
      `expireSec must be a whole number of seconds from ${L.expireSecMin} to ${L.expireSecMax}, got ${describe(expireSec)}.`,
    );
  }
  // Its shape (an absolute http(s) URL) is the client's check, run first; here only its length.
  if (typeof notifyUrl !== 'string' || notifyUrl.length > L.notifyUrlMaxLength) {
    add(
      'INVALID_NOTIFY_URL',
      'notifyUrl',
      `notifyUrl must be an absolute http:// or https:// URL of at most ${L.notifyUrlMaxLength} characters.`,
    );
  }
  return problems;
}

/** The message for an amount outside the bounds, or undefined when it is fine. Also used by `amendPayment`. */
export function amountBoundProblem(amount: unknown, L: Readonly<PaymentLimits>): string | undefined {
  if (typeof amount === 'number') {
    return `amount must be a decimal string such as "${amount}", not a JSON number: floating point cannot hold every amount exactly.`;
  }
  // No sign, exponent, spaces or leading zeros: one spelling per amount keeps comparisons exact.
  const pattern = new RegExp(
    `^(?:0|[1-9]\\d{0,${L.amountMaxIntegerDigits - 1}})(?:\\.\\d{1,${L.amountMaxFractionDigits}})?$`,
  );
  if (typeof amount !== 'string' || !pattern.test(amount)) {
    return `amount must be a decimal string such as "12.50" (digits, an optional fraction of at most ${L.amountMaxFractionDigits} digits; no sign, exponent, spaces or leading zeros), got ${describe(amount)}.`;
  }
  if (/^[0.]+$/.test(amount)) return `amount must be greater than zero, got ${describe(amount)}.`;
  return undefined;
}

/** Order numbers end up in logs, URLs and webhook payloads: printable ASCII without spaces. */
export function isPrintableAscii(value: string, maxLength: number): boolean {
  if (value.length === 0 || value.length > maxLength) return false;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c < 0x21 || c > 0x7e) return false;
  }
  return true;
}

export function isTokenSymbol(value: string, maxLength: number): boolean {
  return value.length <= maxLength && /^[A-Z][A-Z0-9]*$/.test(value);
}

/** A short, safe rendering of a bad value for an error message (the client's wording). */
export function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}...` : value);
  if (typeof value === 'number' || typeof value === 'boolean') return `the ${typeof value} ${String(value)}`;
  if (Array.isArray(value)) return 'an array';
  return `a value of type ${typeof value}`;
}
