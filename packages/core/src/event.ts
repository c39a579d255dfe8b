import { isDecimal, isDigits } from './ascii.js';
import { WebhookError } from './errors.js';

/**
 * The `payment.paid` webhook payload, spec section 2.3, fields exactly as named there.
 *
 * Unknown extra fields the service may add later are kept on the object (forward compatible), but only
 * these are typed and validated.
 *
 * @example
 * ```ts
 * const onPaymentPaid = async (event: PaymentPaidEvent) => {
 *   console.log(event.paymentId, event.orderNo, event.amount, event.tokenSymbol);
 * };
 * ```
 */
export interface PaymentPaidEvent {
  /** Always `payment.paid`. */
  event: 'payment.paid';
  /** Payment identifier, starts with `p_`. */
  paymentId: string;
  /** The merchant's order number given at creation. */
  orderNo: string;
  /** On-chain transaction identifier. */
  txId: string;
  tokenSymbol: string;
  paymentNetwork: string;
  /** Decimal amount in token units, as a string (compare with `compareAmounts`, never with floats). */
  amount: string;
  /** The amount in the token's smallest unit: integer digits. */
  amountRaw: string;
  /** Block number as a digit string; null when no on-chain record exists. */
  blockNum: string | null;
  /** Confirmation count; null when no on-chain record exists. */
  confirmations: number | null;
  /** ISO 8601 UTC with milliseconds, such as `2026-11-21T10:00:00.000Z`. */
  paidAt: string;
}

/** The only event type this SDK handles. */
export const PAYMENT_PAID = 'payment.paid';

const MAX_TEXT = 256;
// 78 digits hold any uint256 amount. The RegExps word the problems; the fast check uses ascii.ts's loops.
const MAX_DIGITS = 78;
const DECIMAL = /^\d{1,78}(?:\.\d{1,78})?$/;
const INTEGER_DIGITS = /^\d{1,78}$/;
const DAYS_IN_MONTH = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

type Problems = string[];

function text(body: Record<string, unknown>, field: string, problems: Problems): void {
  const v = body[field];
  if (typeof v !== 'string' || v.length === 0 || v.length > MAX_TEXT) {
    problems.push(`${field} must be a non-empty string of at most ${MAX_TEXT} characters`);
  }
}

function pattern(body: Record<string, unknown>, field: string, re: RegExp, what: string, problems: Problems): void {
  const v = body[field];
  if (typeof v !== 'string' || !re.test(v)) problems.push(`${field} must be ${what}`);
}

/** The number in `v` from `at` for `length` digits, or -1 if any of them is not a digit. */
function digitsAt(v: string, at: number, length: number): number {
  let n = 0;
  for (let i = at; i < at + length; i++) {
    const c = v.charCodeAt(i) - 0x30;
    if (c < 0 || c > 9) return -1;
    n = n * 10 + c;
  }
  return n;
}

/** `YYYY-MM-DDTHH:mm:ss.sssZ`, a real calendar date and time of day. */
function isValidPaidAt(v: unknown): boolean {
  if (typeof v !== 'string' || v.length !== 24) return false;
  if (
    v.charCodeAt(4) !== 0x2d || // -
    v.charCodeAt(7) !== 0x2d ||
    v.charCodeAt(10) !== 0x54 || // T
    v.charCodeAt(13) !== 0x3a || // :
    v.charCodeAt(16) !== 0x3a ||
    v.charCodeAt(19) !== 0x2e || // .
    v.charCodeAt(23) !== 0x5a // Z
  ) {
    return false;
  }
  const year = digitsAt(v, 0, 4);
  const month = digitsAt(v, 5, 2);
  const day = digitsAt(v, 8, 2);
  const hour = digitsAt(v, 11, 2);
  const minute = digitsAt(v, 14, 2);
  const second = digitsAt(v, 17, 2);
  if (year < 0 || digitsAt(v, 20, 3) < 0 || hour < 0 || hour > 23 || minute < 0 || minute > 59) return false;
  if (second < 0 || second > 59 || month < 1 || month > 12 || day < 1) return false;
  if (day > (DAYS_IN_MONTH[month - 1] as number)) return false;
  return !(month === 2 && day === 29 && !(year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)));
}

const isText = (v: unknown): boolean => typeof v === 'string' && v.length > 0 && v.length <= MAX_TEXT;

/**
 * The whole of spec 2.3 in one pass, for the common case of a valid payload. When it says no,
 * `problemsOf` (the slower path that words every problem) runs; a property test keeps the two in step.
 */
export function isPaymentPaidEvent(body: Record<string, unknown>): boolean {
  const { paymentId, amount, amountRaw, blockNum, confirmations } = body;
  return (
    typeof paymentId === 'string' &&
    paymentId.length > 2 &&
    paymentId.length <= MAX_TEXT &&
    paymentId.charCodeAt(0) === 0x70 && // p
    paymentId.charCodeAt(1) === 0x5f && // _
    isText(body.orderNo) &&
    isText(body.txId) &&
    isText(body.tokenSymbol) &&
    isText(body.paymentNetwork) &&
    typeof amount === 'string' &&
    isDecimal(amount, MAX_DIGITS) &&
    typeof amountRaw === 'string' &&
    isDigits(amountRaw, MAX_DIGITS) &&
    (blockNum === null || (typeof blockNum === 'string' && isDigits(blockNum, MAX_DIGITS))) &&
    (confirmations === null || (Number.isSafeInteger(confirmations) && (confirmations as number) >= 0)) &&
    isValidPaidAt(body.paidAt)
  );
}

/** Every way `body` departs from spec 2.3, in words. Empty when it is a valid payment.paid payload. */
export function problemsOf(body: Record<string, unknown>): string[] {
  const problems: Problems = [];
  const paymentId = body.paymentId;
  if (
    typeof paymentId !== 'string' ||
    !paymentId.startsWith('p_') ||
    paymentId.length < 3 ||
    paymentId.length > MAX_TEXT
  ) {
    problems.push('paymentId must be a string that starts with "p_"');
  }
  text(body, 'orderNo', problems);
  text(body, 'txId', problems);
  text(body, 'tokenSymbol', problems);
  text(body, 'paymentNetwork', problems);
  pattern(body, 'amount', DECIMAL, 'a decimal string such as "12.5" (not a JSON number)', problems);
  pattern(body, 'amountRaw', INTEGER_DIGITS, 'a string of digits', problems);
  const blockNum = body.blockNum;
  if (blockNum !== null && (typeof blockNum !== 'string' || !INTEGER_DIGITS.test(blockNum))) {
    problems.push('blockNum must be a string of digits or null');
  }
  const confirmations = body.confirmations;
  if (confirmations !== null && !(Number.isSafeInteger(confirmations) && (confirmations as number) >= 0)) {
    problems.push('confirmations must be an integer >= 0 or null');
  }
  if (!isValidPaidAt(body.paidAt)) {
    problems.push('paidAt must be an ISO 8601 UTC timestamp with milliseconds, such as 2026-01-31T12:00:00.000Z');
  }
  return problems;
}

/**
 * Checks a parsed, signature-verified body against spec 2.3 and narrows its type. Every problem is
 * reported at once, so one log line tells the whole story.
 */
export function assertPaymentPaidEvent(
  body: Record<string, unknown>,
): asserts body is Record<string, unknown> & PaymentPaidEvent {
  if (isPaymentPaidEvent(body)) return;
  const problems = problemsOf(body);
  throw new WebhookError(
    'INVALID_PAYLOAD',
    `The payment.paid payload is invalid: ${problems.length > 0 ? problems.join('; ') : 'it does not match spec 2.3'}.`,
  );
}
