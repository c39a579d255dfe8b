import { describe } from './describe-value.js';
import { ServiceInputError } from './errors.js';

/**
 * The longest delay a timer holds (a signed 32-bit count of milliseconds): a longer one fires after 1 ms,
 * so a `timeoutMs` of 30 days would time every request out at once. The same bound as `MAX_TIMER_MS` of
 * `@service-pay/core`, stated here because this package depends on nothing.
 */
export const MAX_TIMER_MS = 2_147_483_647;

/**
 * The client's check of a millisecond option that ends up in a timer (`timeoutMs`, the retry waits and
 * deadline): a whole number from `min` to `MAX_TIMER_MS`, or, with `forever`, `Infinity` held at the
 * maximum. `undefined` is the fallback.
 *
 * @example
 * ```ts
 * const timeoutMs = timerMs(options.timeoutMs, 10_000, 'timeoutMs', 1);
 * ```
 */
export function timerMs(value: unknown, fallback: number, field: string, min: 0 | 1, forever = false): number {
  const v = value === undefined ? fallback : value;
  if (forever && v === Number.POSITIVE_INFINITY) return MAX_TIMER_MS;
  if (typeof v === 'number' && Number.isSafeInteger(v) && v >= min && v <= MAX_TIMER_MS) return v;
  throw new ServiceInputError(
    'INVALID_OPTIONS',
    `${field} must be a whole number of milliseconds ${min === 0 ? 'from' : 'above'} 0 and at most ${MAX_TIMER_MS} (about 24.8 days, the longest a timer holds: a longer one fires at once${forever ? '; Infinity for no limit' : ''}), got ${describe(v)}.`,
    field,
  );
}
