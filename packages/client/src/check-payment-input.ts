import { describe } from './describe-value.js';
import type { CreatePaymentInput } from './payment.js';

/**
 * Why a payment input was refused. The simulator answers the same codes in its 400 error bodies, so a
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
 * @deprecated Not used by the client, which checks only what the spec states. These were the bounds of
 * release 0.1, which the spec leaves "not shown"; they remain the simulator's defaults and the export stays
 * for compatibility until the simulator owns them.
 *
 * @example
 * ```ts
 * // The simulator's default upper bound for orderNo; the client itself accepts any non-empty string.
 * const max = PAYMENT_INPUT_LIMITS.orderNoMaxLength; // 64
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

// Spec 2.1: "a decimal string, not a JSON number". The same shape as core's amount helpers read, so an
// amount the client sends is one `compareAmounts` can compare; no sign, exponent or spaces.
const DECIMAL = /^\d+(?:\.\d+)?$/;

/**
 * Checks a payment input against what the spec states (2.1) and returns every problem (empty when the
 * input is fine): `orderNo` and `tokenSymbol` non-empty strings, `amount` a decimal string (not a JSON
 * number), `expireSec` a positive whole number of seconds, `notifyUrl` an absolute http(s) URL. Bounds the
 * spec leaves "not shown" (lengths, allowed token symbols, the largest lifetime or amount) are the
 * service's to enforce; its 400 answer arrives as a `ServiceApiError`. `createPayment` runs this check
 * before sending. Unknown extra fields are allowed and sent along.
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

  if (typeof orderNo !== 'string' || orderNo.length === 0) {
    add('INVALID_ORDER_NO', 'orderNo', `orderNo must be a non-empty string, got ${describe(orderNo)}.`);
  }
  if (typeof tokenSymbol !== 'string' || tokenSymbol.length === 0) {
    add(
      'INVALID_TOKEN_SYMBOL',
      'tokenSymbol',
      `tokenSymbol must be a non-empty string such as "USDT", got ${describe(tokenSymbol)}.`,
    );
  }
  if (typeof amount === 'number') {
    add(
      'INVALID_AMOUNT',
      'amount',
      `amount must be a decimal string such as "${amount}", not a JSON number: floating point cannot hold every amount exactly.`,
    );
  } else if (typeof amount !== 'string' || !DECIMAL.test(amount)) {
    add(
      'INVALID_AMOUNT',
      'amount',
      `amount must be a decimal string such as "12.50" (digits and an optional fraction; no sign, exponent or spaces), got ${describe(amount)}.`,
    );
  }
  if (!Number.isSafeInteger(expireSec) || (expireSec as number) < 1) {
    add(
      'INVALID_EXPIRE_SEC',
      'expireSec',
      `expireSec must be a positive whole number of seconds, got ${describe(expireSec)}.`,
    );
  }
  const urlProblem = notifyUrlProblem(notifyUrl);
  if (urlProblem !== undefined) add('INVALID_NOTIFY_URL', 'notifyUrl', urlProblem);
  return problems;
}

function notifyUrlProblem(value: unknown): string | undefined {
  const expected = 'notifyUrl must be an absolute http:// or https:// URL';
  if (typeof value !== 'string') return `${expected}, got ${describe(value)}.`;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return `${expected}, got ${describe(value)}.`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `${expected}, got the scheme "${url.protocol}".`;
  return undefined;
}
