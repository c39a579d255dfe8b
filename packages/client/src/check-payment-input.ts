import { describe } from './describe-value.js';
import type { CreatePaymentInput } from './payment.js';

/**
 * Why a payment input was refused. The same codes come back from the simulator as 400 error bodies, so a
 * problem reads the same whether the client or the service caught it.
 *
 * @example
 * ```ts
 * if (problems[0]?.code === 'INVALID_AMOUNT') console.error('send the amount as a string such as "12.50"');
 * ```
 */
export type PaymentInputCode =
  | 'INVALID_BODY'
  | 'INVALID_ORDER_NO'
  | 'INVALID_TOKEN_SYMBOL'
  | 'INVALID_AMOUNT'
  | 'INVALID_EXPIRE_SEC'
  | 'INVALID_NOTIFY_URL';

/**
 * One broken rule in a payment input.
 *
 * @example
 * ```ts
 * const problem: PaymentInputProblem = { code: 'INVALID_AMOUNT', field: 'amount', message: 'amount must be ...' };
 * ```
 */
export interface PaymentInputProblem {
  code: PaymentInputCode;
  /** The field at fault; `undefined` when the input as a whole is not an object. */
  field: keyof CreatePaymentInput | undefined;
  message: string;
}

/**
 * The bounds `checkPaymentInput` enforces. The spec leaves them open; these are the simulator's, chosen
 * wide enough for real shops and narrow enough to catch mistakes.
 *
 * @example
 * ```ts
 * if (orderNo.length > PAYMENT_INPUT_LIMITS.orderNoMaxLength) throw new Error('order number too long');
 * ```
 */
export const PAYMENT_INPUT_LIMITS = Object.freeze({
  orderNoMaxLength: 64,
  tokenSymbolMaxLength: 16,
  amountMaxIntegerDigits: 30,
  amountMaxFractionDigits: 18,
  expireSecMin: 1,
  expireSecMax: 604_800,
  notifyUrlMaxLength: 2048,
});

const L = PAYMENT_INPUT_LIMITS;
// Printable ASCII without spaces: order numbers end up in logs, URLs and webhook payloads.
const ORDER_NO = new RegExp(`^[\\x21-\\x7e]{1,${L.orderNoMaxLength}}$`);
const TOKEN_SYMBOL = new RegExp(`^[A-Z][A-Z0-9]{0,${L.tokenSymbolMaxLength - 1}}$`);
// No sign, exponent, spaces or leading zeros: one spelling per amount keeps comparisons exact.
const AMOUNT = new RegExp(
  `^(?:0|[1-9]\\d{0,${L.amountMaxIntegerDigits - 1}})(?:\\.\\d{1,${L.amountMaxFractionDigits}})?$`,
);

/**
 * Checks a payment input against the rules the simulator enforces and returns every problem (empty when
 * the input is fine). `createPayment` runs it before sending; the simulator runs it on every request and
 * answers the first problem as a 400 with its code. Unknown extra fields are allowed and sent along.
 *
 * @example
 * ```ts
 * import { checkPaymentInput } from '@service-pay/client';
 *
 * const problems = checkPaymentInput({ orderNo: 'o-1', tokenSymbol: 'USDT', amount: 12.5, expireSec: 900, notifyUrl: 'x' });
 * // [{ code: 'INVALID_AMOUNT', field: 'amount', ... }, { code: 'INVALID_NOTIFY_URL', field: 'notifyUrl', ... }]
 * ```
 */
export function checkPaymentInput(input: unknown): PaymentInputProblem[] {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    return [
      {
        code: 'INVALID_BODY',
        field: undefined,
        message: `The payment input must be an object with orderNo, tokenSymbol, amount, expireSec and notifyUrl, got ${describe(input)}.`,
      },
    ];
  }
  const { orderNo, tokenSymbol, amount, expireSec, notifyUrl } = input as Record<string, unknown>;
  const problems: PaymentInputProblem[] = [];
  const add = (code: PaymentInputCode, field: keyof CreatePaymentInput, message: string) => {
    problems.push({ code, field, message });
  };

  if (typeof orderNo !== 'string' || !ORDER_NO.test(orderNo)) {
    add(
      'INVALID_ORDER_NO',
      'orderNo',
      `orderNo must be a string of 1 to ${L.orderNoMaxLength} printable ASCII characters without spaces, got ${describe(orderNo)}.`,
    );
  }
  if (typeof tokenSymbol !== 'string' || !TOKEN_SYMBOL.test(tokenSymbol)) {
    add(
      'INVALID_TOKEN_SYMBOL',
      'tokenSymbol',
      `tokenSymbol must be 1 to ${L.tokenSymbolMaxLength} uppercase letters and digits starting with a letter, such as "USDT", got ${describe(tokenSymbol)}.`,
    );
  }
  if (typeof amount === 'number') {
    add(
      'INVALID_AMOUNT',
      'amount',
      `amount must be a decimal string such as "${amount}", not a JSON number: floating point cannot hold every amount exactly.`,
    );
  } else if (typeof amount !== 'string' || !AMOUNT.test(amount)) {
    add(
      'INVALID_AMOUNT',
      'amount',
      `amount must be a decimal string such as "12.50" (digits, an optional fraction of at most ${L.amountMaxFractionDigits} digits; no sign, exponent, spaces or leading zeros), got ${describe(amount)}.`,
    );
  } else if (/^[0.]+$/.test(amount)) {
    add('INVALID_AMOUNT', 'amount', `amount must be greater than zero, got ${describe(amount)}.`);
  }
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
  const urlProblem = notifyUrlProblem(notifyUrl);
  if (urlProblem !== undefined) add('INVALID_NOTIFY_URL', 'notifyUrl', urlProblem);
  return problems;
}

function notifyUrlProblem(value: unknown): string | undefined {
  const expected = 'notifyUrl must be an absolute http:// or https:// URL';
  if (typeof value !== 'string') return `${expected}, got ${describe(value)}.`;
  if (value.length > L.notifyUrlMaxLength) return `${expected} of at most ${L.notifyUrlMaxLength} characters.`;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return `${expected}, got ${describe(value)}.`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `${expected}, got the scheme "${url.protocol}".`;
  return undefined;
}
