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

// Positions of the separators in YYYY-MM-DDTHH:mm:ss.sssZ; every other position is a digit.
const PAID_AT_SEPARATORS: Record<number, number> = {
  4: 0x2d,
  7: 0x2d,
  10: 0x54,
  13: 0x3a,
  16: 0x3a,
  19: 0x2e,
  23: 0x5a,
};

function isValidPaidAt(v: unknown): boolean {
  if (typeof v !== 'string' || v.length !== 24) return false;
  for (let i = 0; i < 24; i++) {
    const c = v.charCodeAt(i);
    const separator = PAID_AT_SEPARATORS[i];
    if (separator !== undefined ? c !== separator : c < 0x30 || c > 0x39) return false;
  }
  const num = (at: number, len: number) => {
    let n = 0;
    for (let i = at; i < at + len; i++) n = n * 10 + v.charCodeAt(i) - 0x30;
    return n;
  };
  const year = num(0, 4);
  const month = num(5, 2);
  const day = num(8, 2);
  if (month < 1 || month > 12 || day < 1 || day > (DAYS_IN_MONTH[month - 1] as number)) return false;
  if (month === 2 && day === 29 && !(year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0))) return false;
  return num(11, 2) < 24 && num(14, 2) < 60 && num(17, 2) < 60;
}

/**
 * Checks a parsed, signature-verified body against spec 2.3 and narrows its type. Every problem is
 * reported at once, so one log line tells the whole story.
 */
export function assertPaymentPaidEvent(
  body: Record<string, unknown>,
): asserts body is Record<string, unknown> & PaymentPaidEvent {
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
  if (problems.length > 0) {
    throw new WebhookError('INVALID_PAYLOAD', `The payment.paid payload is invalid: ${problems.join('; ')}.`);
  }
}
