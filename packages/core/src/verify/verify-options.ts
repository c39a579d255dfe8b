import { WebhookError } from '../errors/webhook-error.js';

/**
 * Options for `verifyWebhook` (and, through `HandlerOptions`, for every handler and adapter).
 *
 * @example
 * ```ts
 * const options: VerifyOptions = { secret: [process.env.WEBHOOK_SECRET!, process.env.OLD_WEBHOOK_SECRET!] };
 * ```
 */
export interface VerifyOptions {
  /** The webhook secret, or several during a rotation: a signature made with any of them passes. */
  secret: string | readonly string[];
  /** Largest allowed distance between `t` and now, in either direction, in seconds. Default 300. */
  toleranceSec?: number;
  /** Clock in milliseconds, for tests. Default `Date.now`. */
  now?: () => number;
}

/** Verify options checked and defaulted once. */
export interface ResolvedVerifyOptions {
  secrets: readonly string[];
  toleranceSec: number;
  now: () => number;
}

const SET_IT = 'Is the environment variable set?';

const isVisible = (c: number) => c > 0x20 && c < 0x7f;

/**
 * Why `secret` must never become an HMAC key, or `undefined` when it may. A blank secret is the dangerous
 * one: an unset line in an env file easily gives `""` or `" "`, and anyone can sign with it.
 */
function secretProblem(secret: unknown): string | undefined {
  if (typeof secret !== 'string') return `is ${secret === null ? 'null' : typeof secret}, not a string. ${SET_IT}`;
  if (secret.length === 0) return `is empty. ${SET_IT}`;
  // The usual secret starts and ends with a visible ASCII character: then no trim() is needed
  // (verifyWebhook checks its options on every call).
  if (isVisible(secret.charCodeAt(0)) && isVisible(secret.charCodeAt(secret.length - 1))) return undefined;
  if (secret.trim().length === 0) {
    return `is only whitespace, which anyone could sign with. ${SET_IT}`;
  }
  if (secret !== secret.trim()) {
    return 'has leading or trailing whitespace (a newline from an env file is common): trim it.';
  }
  return undefined;
}

/**
 * Checks the secret or rotation list, naming the problem and never the secret. Throws INVALID_OPTIONS.
 *
 * @example
 * ```ts
 * const secrets = checkSecrets(process.env.SERVICE_WEBHOOK_SECRET); // throws when unset or blank
 * ```
 */
export function checkSecrets(secret: unknown): readonly string[] {
  if (Array.isArray(secret)) {
    if (secret.length === 0) {
      throw new WebhookError('INVALID_OPTIONS', 'options.secret is an empty list: give at least one webhook secret.');
    }
    secret.forEach((s: unknown, i) => {
      const problem = secretProblem(s);
      if (problem !== undefined) throw new WebhookError('INVALID_OPTIONS', `options.secret[${i}] ${problem}`);
    });
    return [...secret] as string[];
  }
  const problem = secretProblem(secret);
  if (problem !== undefined) {
    throw new WebhookError(
      'INVALID_OPTIONS',
      `options.secret ${problem}${typeof secret === 'string' ? '' : ' It must be the webhook secret or a list of them.'}`,
    );
  }
  return [secret as string];
}

/**
 * Checks every verify option once, so a misconfiguration fails at start-up, not on a payment.
 *
 * @example
 * ```ts
 * const resolved = resolveVerifyOptions({ secret: process.env.SERVICE_WEBHOOK_SECRET! });
 * ```
 */
export function resolveVerifyOptions(options: VerifyOptions): ResolvedVerifyOptions {
  if (options === null || typeof options !== 'object') {
    throw new WebhookError('INVALID_OPTIONS', 'Options are required: { secret }.');
  }
  const secrets = checkSecrets(options.secret);
  const toleranceSec = options.toleranceSec ?? 300;
  if (typeof toleranceSec !== 'number' || !(Number.isFinite(toleranceSec) && toleranceSec > 0)) {
    throw new WebhookError('INVALID_OPTIONS', 'options.toleranceSec must be a positive number of seconds.');
  }
  const now = options.now ?? Date.now;
  if (typeof now !== 'function') throw new WebhookError('INVALID_OPTIONS', 'options.now must be a function.');
  return { secrets, toleranceSec, now };
}

/**
 * Reads the clock, failing closed: a clock that returns anything but a finite number would otherwise turn
 * the timestamp check off (every comparison with NaN is false).
 */
export function readClock(now: () => number): number {
  const ms = now();
  if (typeof ms !== 'number' || !Number.isFinite(ms)) {
    throw new WebhookError(
      'INVALID_OPTIONS',
      `options.now() returned ${typeof ms === 'number' ? String(ms) : typeof ms}, not a finite number of milliseconds; the signature timestamp cannot be checked, so the delivery is refused.`,
    );
  }
  return ms;
}
