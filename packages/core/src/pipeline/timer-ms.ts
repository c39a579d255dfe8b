import { WebhookError } from '../errors/webhook-error.js';

/**
 * The longest delay a timer holds: Node, browsers and edge runtimes keep a timer's delay in a signed 32-bit
 * integer, and a longer one (30 days, `2 ** 31`) fires after 1 ms with a `TimeoutOverflowWarning` at most.
 *
 * @example
 * ```ts
 * timerMs(config.bodyTimeoutMs, 10_000, 'options.bodyTimeoutMs') <= MAX_TIMER_MS; // true
 * ```
 */
export const MAX_TIMER_MS = 2_147_483_647;

/** How `timerMs` reads a value and reports a wrong one. */
export interface TimerMsOptions {
  /** Whether 0 is a value (no wait at all). Default: only positive values. */
  zero?: boolean;
  /**
   * Whether `Infinity` means "no limit of its own"; it is then held at `MAX_TIMER_MS`, which is what a
   * timer can wait. Default: `Infinity` is refused like any value past the maximum.
   */
  forever?: boolean;
  /** The error to throw with the message. Default: `WebhookError` with code `INVALID_OPTIONS`. */
  error?: (message: string) => Error;
}

/**
 * The one check of a millisecond option that ends up as a timer's delay (`setTimeout`, a socket timeout,
 * an ORM's transaction timer): a number of milliseconds, positive (or 0 when `zero`), at most
 * `MAX_TIMER_MS`, checked when the option is given, so a delay no timer can hold fails the start-up and
 * not every request. `undefined` is the fallback. Options that never reach a timer (a store's TTL, an age
 * compared with a clock) do not use it: they may be longer.
 *
 * @example
 * ```ts
 * const timeout = timerMs(options.bodyTimeoutMs, 10_000, 'options.bodyTimeoutMs');
 * timerMs(2 ** 31, 10_000, 'options.bodyTimeoutMs'); // throws INVALID_OPTIONS naming the option
 * ```
 */
export function timerMs(value: unknown, fallback: number, name: string, options: TimerMsOptions = {}): number {
  const v = value === undefined ? fallback : value;
  if (options.forever === true && v === Number.POSITIVE_INFINITY) return MAX_TIMER_MS;
  if (typeof v === 'number' && v <= MAX_TIMER_MS && (v > 0 || (options.zero === true && v === 0))) return v;
  const least = options.zero === true ? 'from 0' : 'above 0';
  const message = `${name} must be a number of milliseconds ${least} and at most ${MAX_TIMER_MS} (about 24.8 days, the longest a timer holds: a longer one fires at once${options.forever === true ? '; Infinity for no limit' : ''}), got ${describe(v)}.`;
  throw options.error === undefined ? new WebhookError('INVALID_OPTIONS', message) : options.error(message);
}

function describe(value: unknown): string {
  if (typeof value === 'number') return String(value);
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}...` : value);
  return value === null ? 'null' : typeof value;
}
