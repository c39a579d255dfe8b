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
 * The shortest webhook secret verification accepts. 16 characters is the least that can carry 128 bits
 * even as raw bytes, the strength HMAC-SHA256 is used at here; real secrets are far longer (the simulator's
 * are 59 characters), while what an env-file slip leaves behind (`a`, `undefined`, `changeme`) is shorter.
 */
export const MIN_SECRET_LENGTH = 16;

/** Texts a template literal makes of a missing value: `${process.env.X}` gives "undefined". */
const MISSING_VALUE_TEXTS: ReadonlySet<string> = new Set(['undefined', 'null', 'NaN', '[object Object]']);

/** Control (Cc) and invisible format (Cf: zero-width space, BOM, bidi marks) characters. */
const INVISIBLE = /[\p{Cc}\p{Cf}]/u;

/**
 * Why `secret` must never become an HMAC key, or `undefined` when it may. A blank secret is the dangerous
 * one: an unset line in an env file easily gives `""` or `" "`, and anyone can sign with it. Verification
 * also asks for `MIN_SECRET_LENGTH`; signing (the test tools) does not.
 */
function secretProblem(secret: unknown, minLength: number): string | undefined {
  if (typeof secret !== 'string') return `is ${secret === null ? 'null' : typeof secret}, not a string. ${SET_IT}`;
  if (secret.length === 0) return `is empty. ${SET_IT}`;
  // The usual secret is visible ASCII throughout: one pass, no regex, no trim (verifyWebhook checks its
  // options on every call).
  let visible = true;
  for (let i = 0; i < secret.length && visible; i++) visible = isVisible(secret.charCodeAt(i)) || secret[i] === ' ';
  if (!visible || !isVisible(secret.charCodeAt(0)) || !isVisible(secret.charCodeAt(secret.length - 1))) {
    if (secret.trim().length === 0) return `is only whitespace, which anyone could sign with. ${SET_IT}`;
    if (secret !== secret.trim()) {
      return 'has leading or trailing whitespace (a newline from an env file is common): trim it.';
    }
    const invisible = INVISIBLE.exec(secret);
    if (invisible !== null) {
      const code = (invisible[0].codePointAt(0) as number).toString(16).toUpperCase().padStart(4, '0');
      return `contains an invisible character (U+${code} at index ${invisible.index}), which no copy of the secret shows: copy it again.`;
    }
  }
  if (MISSING_VALUE_TEXTS.has(secret))
    return `is the text "${secret}": the value was missing when it was built. ${SET_IT}`;
  if (secret.length < minLength) {
    return `is ${secret.length} characters; a webhook secret has at least ${minLength} (128 bits for the HMAC key). Copy the whole secret.`;
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
export function checkSecrets(secret: unknown, minLength = MIN_SECRET_LENGTH): readonly string[] {
  if (Array.isArray(secret)) {
    if (secret.length === 0) {
      throw new WebhookError('INVALID_OPTIONS', 'options.secret is an empty list: give at least one webhook secret.');
    }
    secret.forEach((s: unknown, i) => {
      const problem = secretProblem(s, minLength);
      if (problem !== undefined) throw new WebhookError('INVALID_OPTIONS', `options.secret[${i}] ${problem}`);
    });
    return [...secret] as string[];
  }
  const problem = secretProblem(secret, minLength);
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
