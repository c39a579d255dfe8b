import { brandErrorClass } from '../errors/brand.js';

/**
 * Thrown by the decimal helpers for an amount that is not a plain decimal string.
 *
 * @example
 * ```ts
 * try { compareAmounts('1e3', '1000'); } catch (e) { if (e instanceof InvalidAmountError) console.log(e.code); }
 * ```
 */
export class InvalidAmountError extends TypeError {
  override readonly name = 'InvalidAmountError';
  readonly code = 'INVALID_AMOUNT';
}

brandErrorClass(InvalidAmountError, 'InvalidAmountError');

const DECIMAL = /^(\d+)(?:\.(\d+))?$/;

/**
 * The most digits a token amount can have on either side of the point: a uint256 holds 78 decimal digits,
 * and no token has more than 78 decimals. Longer input is refused before any work: parsing an unbounded
 * amount is superlinear (60,000 digits take 2.6 s).
 */
export const MAX_AMOUNT_DIGITS = 78;

function parts(amount: string, which: string): [string, string] {
  if (typeof amount === 'string' && amount.length > 2 * MAX_AMOUNT_DIGITS + 1) {
    throw new InvalidAmountError(
      `${which} has more digits than a token amount can have (at most ${MAX_AMOUNT_DIGITS} before and after the point), got ${amount.length} characters.`,
    );
  }
  const m = typeof amount === 'string' ? DECIMAL.exec(amount) : null;
  if (m === null) {
    throw new InvalidAmountError(
      `${which} must be a decimal string such as "12.50" (digits, optional fraction; no sign, exponent or spaces), got ${typeof amount === 'string' ? JSON.stringify(amount.slice(0, 40)) : typeof amount}.`,
    );
  }
  const [, intDigits = '', fracDigits = ''] = m;
  if (intDigits.length > MAX_AMOUNT_DIGITS || fracDigits.length > MAX_AMOUNT_DIGITS) {
    throw new InvalidAmountError(
      `${which} has more digits than a token amount can have (at most ${MAX_AMOUNT_DIGITS} before and after the point).`,
    );
  }
  // Strip insignificant zeros so "010.50" and "10.5" compare equal (by index: a regex such as /0+$/ is
  // quadratic on long runs of zeros).
  return [stripLeadingZeros(intDigits), stripTrailingZeros(fracDigits)];
}

function stripLeadingZeros(digits: string): string {
  let start = 0;
  while (start < digits.length - 1 && digits.charCodeAt(start) === 48) start++;
  return digits.slice(start);
}

function stripTrailingZeros(digits: string): string {
  let end = digits.length;
  while (end > 0 && digits.charCodeAt(end - 1) === 48) end--;
  return digits.slice(0, end);
}

/**
 * Compares two decimal amount strings exactly, with no floating point: -1 when `a < b`, 0 when equal
 * (`"10.50"` equals `"10.5"`), 1 when `a > b`. Use it to check a paid amount against the order.
 *
 * @example
 * ```ts
 * import { compareAmounts, PaymentRejectedError } from '@service-pay/core';
 *
 * if (compareAmounts(event.amount, order.amount) !== 0) {
 *   throw new PaymentRejectedError(`paid ${event.amount}, expected ${order.amount}`);
 * }
 * ```
 */
export function compareAmounts(a: string, b: string): -1 | 0 | 1 {
  const [aInt, aFrac] = parts(a, 'a');
  const [bInt, bFrac] = parts(b, 'b');
  if (aInt.length !== bInt.length) return aInt.length < bInt.length ? -1 : 1;
  if (aInt !== bInt) return aInt < bInt ? -1 : 1;
  const width = Math.max(aFrac.length, bFrac.length);
  const af = aFrac.padEnd(width, '0');
  const bf = bFrac.padEnd(width, '0');
  return af === bf ? 0 : af < bf ? -1 : 1;
}

/**
 * Converts a decimal amount to the token's smallest unit, exactly: `toRawAmount("1.5", 6) === "1500000"`.
 * Throws `InvalidAmountError` when the amount has more fraction digits than `decimals`.
 *
 * @example
 * ```ts
 * if (toRawAmount(event.amount, 6) !== event.amountRaw) throw new PaymentRejectedError('amountRaw disagrees');
 * ```
 */
export function toRawAmount(amount: string, decimals: number): string {
  if (!Number.isSafeInteger(decimals) || decimals < 0 || decimals > 78) {
    throw new InvalidAmountError('decimals must be an integer from 0 to 78.');
  }
  const [int, frac] = parts(amount, 'amount');
  if (frac.length > decimals) {
    throw new InvalidAmountError(`amount ${JSON.stringify(amount)} has more than ${decimals} fraction digits.`);
  }
  return stripLeadingZeros(`${int}${frac.padEnd(decimals, '0')}`);
}
