import { type ResolvedVerifyOptions, resolveVerifyOptions, type VerifyOptions } from './verify-options.js';

/**
 * What an options object was resolved from: the values read on first use, compared by identity on every
 * later call, and the list's entries as they were (a list changed in place must not keep its old reading).
 */
interface Resolution {
  secret: unknown;
  secrets: readonly unknown[] | undefined;
  toleranceSec: unknown;
  now: unknown;
  resolved: ResolvedVerifyOptions;
}

const resolutions = new WeakMap<object, Resolution>();

/**
 * `resolveVerifyOptions`, once per options object: `verifyWebhook` is called with the same object on every
 * delivery, and checking the secret (length, control and invisible characters, the texts a missing value
 * leaves) cost about a tenth of a verification when it ran on each one. The first call with an object runs
 * every check and throws its error; later calls reuse the result.
 *
 * An object changed after its first use (a rotated `secret`, a list with a secret pushed or replaced, another
 * `toleranceSec` or `now`) is resolved again, checks included: the fields it was resolved from are compared
 * by identity on every call (four reads and a loop over a list of one to three secrets). Silently verifying
 * with a secret the caller replaced would be the worse surprise, and an object that changes is checked
 * again, so a blank secret put in later still fails as INVALID_OPTIONS.
 *
 * @example
 * ```ts
 * const options = { secret: process.env.SERVICE_WEBHOOK_SECRET! };
 * resolvedOnce(options) === resolvedOnce(options); // true: checked on the first call only
 * ```
 */
export function resolvedOnce(options: VerifyOptions): ResolvedVerifyOptions {
  // A non-object is refused by resolveVerifyOptions (and could not be a WeakMap key).
  if (options === null || typeof options !== 'object') return resolveVerifyOptions(options);
  const known = resolutions.get(options);
  if (known !== undefined && unchanged(known, options)) return known.resolved;
  const resolved = resolveVerifyOptions(options);
  const { secret } = options;
  resolutions.set(options, {
    secret,
    secrets: Array.isArray(secret) ? [...secret] : undefined,
    toleranceSec: options.toleranceSec,
    now: options.now,
    resolved,
  });
  return resolved;
}

function unchanged(known: Resolution, options: VerifyOptions): boolean {
  const { secret } = options;
  if (secret !== known.secret || options.toleranceSec !== known.toleranceSec || options.now !== known.now) {
    return false;
  }
  const was = known.secrets;
  if (was === undefined) return true;
  const list = secret as readonly unknown[];
  if (list.length !== was.length) return false;
  for (let i = 0; i < list.length; i++) if (list[i] !== was[i]) return false;
  return true;
}
