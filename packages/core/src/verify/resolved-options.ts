import { type ResolvedVerifyOptions, resolveVerifyOptions, type VerifyOptions } from './verify-options.js';

/** A resolution and the `toleranceSec` and `now` it was made from, compared by identity on every call. */
interface Resolution {
  toleranceSec: unknown;
  now: unknown;
  resolved: ResolvedVerifyOptions;
}

/**
 * Resolutions by the first secret they hold. A process verifies with one secret, or two or three during a
 * rotation, so this stays tiny; the bound only keeps misuse (a new secret on every call) from growing it.
 */
const bySecret = new Map<string, Resolution>();
const MAX_RESOLUTIONS = 64;

/** The resolution a single secret (a string, compared by value) was last served, with what it was checked with. */
let lastSingle: { secret: string; toleranceSec: unknown; now: unknown; resolved: ResolvedVerifyOptions } | undefined;

/**
 * `resolveVerifyOptions`, once per configuration however the options reach `verifyWebhook`: the same object
 * on every call, or a fresh one written inline (`verifyWebhook(input, { secret })`, as the README shows).
 * Checking a secret (length, control and invisible characters, the texts a missing value leaves, distinct
 * characters) costs about a tenth of a verification, so it runs the first time a secret (or list) is seen and
 * again only when something differs.
 *
 * The cache is keyed by the secrets' contents, never by an object's identity: a later call is served from it
 * only when its secrets equal, entry for entry, a list that passed every check, and its `toleranceSec` and
 * `now` are the very values that were checked with it. Anything else (another or rotated secret, a list with
 * one changed, another tolerance or clock, a blank secret put in later) is resolved again, checks included,
 * and throws INVALID_OPTIONS as the first call would. The options are read once here; the resolution holds
 * copies, so a list changed in place after the call cannot change what was checked.
 *
 * @example
 * ```ts
 * resolvedOnce({ secret }) === resolvedOnce({ secret }); // true: checked on the first call only
 * ```
 */
export function resolvedOnce(options: VerifyOptions): ResolvedVerifyOptions {
  // A non-object is refused by resolveVerifyOptions, with its message.
  if (options === null || typeof options !== 'object') return resolveVerifyOptions(options);
  const { secret, toleranceSec, now } = options;
  // The last single-secret resolution, answered without the map: a string is a value, so equal is the same.
  const last = lastSingle;
  if (last !== undefined && secret === last.secret && toleranceSec === last.toleranceSec && now === last.now) {
    return last.resolved;
  }
  const first = typeof secret === 'string' ? secret : Array.isArray(secret) ? secret[0] : undefined;
  const known = typeof first === 'string' ? bySecret.get(first) : undefined;
  if (
    known !== undefined &&
    known.toleranceSec === toleranceSec &&
    known.now === now &&
    sameSecrets(known.resolved.secrets, secret)
  ) {
    if (typeof secret === 'string') lastSingle = { secret, toleranceSec, now, resolved: known.resolved };
    return known.resolved;
  }
  // The values just read, not the object again: a getter could answer differently on a second read.
  const resolved = resolveVerifyOptions({ secret, toleranceSec, now } as VerifyOptions);
  if (bySecret.size >= MAX_RESOLUTIONS) bySecret.clear();
  bySecret.set(resolved.secrets[0] as string, { toleranceSec, now, resolved });
  if (typeof secret === 'string') lastSingle = { secret, toleranceSec, now, resolved };
  return resolved;
}

/** Whether `secret` (a string or a list, as given) holds exactly `checked`, in order. */
function sameSecrets(checked: readonly string[], secret: unknown): boolean {
  if (typeof secret === 'string') return checked.length === 1 && checked[0] === secret;
  const list = secret as readonly unknown[];
  if (list.length !== checked.length) return false;
  for (let i = 0; i < list.length; i++) if (list[i] !== checked[i]) return false;
  return true;
}
