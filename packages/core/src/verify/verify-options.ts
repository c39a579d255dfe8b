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

/**
 * Characters no copy of a secret shows, or shows as a plain space: control (Cc) and format (Cf: zero-width
 * space, BOM, bidi marks) characters; the default-ignorable ones (Hangul fillers U+115F U+1160 U+3164
 * U+FFA0, the combining grapheme joiner U+034F, variation selectors U+FE00-U+FE0F and U+E0100-U+E01EF);
 * the braille blank U+2800; and every space but the ASCII one (U+00A0, U+2000-U+200A, U+3000, line and
 * paragraph separators), which a reader takes for a space though it is other bytes.
 */
const INVISIBLE =
  /[\p{Cc}\p{Cf}\p{Default_Ignorable_Code_Point}\p{Zl}\p{Zp}\u2800\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]/u;

/**
 * The distinct characters a verification secret needs: one per six characters, at least 4, at most 8.
 * What it refuses is a placeholder (`aaaa...`, `0000...`, `abab...`, `whsec_` and one letter repeated);
 * a random secret fails it with a chance under 1e-9 drawn from hex digits, under 3e-5 from decimal digits.
 */
const distinctNeeded = (length: number) => Math.max(4, Math.min(8, Math.ceil(length / 6)));

/** Whether `text` holds at least `needed` distinct characters; stops as soon as it does. */
function hasDistinct(text: string, needed: number): boolean {
  // ASCII in a 128-bit set (no allocation for the usual secret); anything else in a Set, made if needed.
  const ascii = [0, 0, 0, 0];
  let other: Set<string> | undefined;
  let count = 0;
  for (const char of text) {
    const c = char.charCodeAt(0);
    if (c < 0x80) {
      const bit = 1 << (c & 31);
      if (((ascii[c >> 5] as number) & bit) !== 0) continue;
      ascii[c >> 5] = (ascii[c >> 5] as number) | bit;
    } else {
      other ??= new Set();
      if (other.has(char)) continue;
      other.add(char);
    }
    if (++count >= needed) return true;
  }
  return false;
}

/**
 * Why `secret` must never become an HMAC key, or `undefined` when it may. A blank secret is the dangerous
 * one: an unset line in an env file easily gives `""` or `" "`, and anyone can sign with it. Verification
 * also asks for `MIN_SECRET_LENGTH` and some distinct characters; signing (the test tools, `minLength` 1)
 * asks neither.
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
  if (minLength > 1 && !hasDistinct(secret, distinctNeeded(secret.length))) {
    return `has fewer than ${distinctNeeded(secret.length)} distinct characters in ${secret.length}: it is a placeholder, not a generated secret. Copy the real one.`;
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
    // Copied first and the copy checked: a list that answers differently on a second read (a Proxy, a
    // getter) cannot pass the checks with one set of values and be used with another.
    const list: unknown[] = [...secret];
    if (list.length === 0) {
      throw new WebhookError('INVALID_OPTIONS', 'options.secret is an empty list: give at least one webhook secret.');
    }
    list.forEach((s, i) => {
      const problem = secretProblem(s, minLength);
      if (problem !== undefined) throw new WebhookError('INVALID_OPTIONS', `options.secret[${i}] ${problem}`);
    });
    return Object.freeze(list as string[]);
  }
  const problem = secretProblem(secret, minLength);
  if (problem !== undefined) {
    throw new WebhookError(
      'INVALID_OPTIONS',
      `options.secret ${problem}${typeof secret === 'string' ? '' : ' It must be the webhook secret or a list of them.'}`,
    );
  }
  return Object.freeze([secret as string]);
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
