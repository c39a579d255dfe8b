/**
 * What to tell the merchant when well-formed signatures do not match: the likeliest cause we can see from
 * the configured secrets and the body as received. Only on the failure path, so its cost never touches a
 * delivery that verifies; it looks at the first few KB of the body at most, in one pass (no RegExp that
 * can backtrack: anyone can send a body that fails, so its cost must stay linear in the bytes read).
 *
 * The hint goes to the merchant's logs and to `verifyWebhook`'s error message, never to the caller of the
 * endpoint: an anonymous sender must not learn anything about the configured secrets.
 */
export function mismatchHint(secrets: readonly string[], body: Uint8Array | string): string {
  return secretsHint(secrets) ?? bodyHint(headOf(body));
}

/**
 * The mismatch hints of one handler, each given once (the handler logs each once). Once every hint this
 * handler can give was given, a mismatch computes none: a flood of bad signatures then costs no scan at
 * all, and nobody can make the handler look at the same 4 KB again and again.
 *
 * @example
 * ```ts
 * const hints = new MismatchHints(resolved.secrets);
 * hints.next(body); // the hint, the first time this cause is seen; undefined after that
 * ```
 */
export class MismatchHints {
  readonly #given = new Set<string>();
  /** The one hint the secrets dictate whatever the body, if any. */
  readonly #fixed: string | undefined;
  #left: number;

  constructor(secrets: readonly string[]) {
    this.#fixed = secretsHint(secrets);
    this.#left = this.#fixed === undefined ? BODY_HINTS : 1;
  }

  /** The hint for a mismatch of this body if it was not given before; `undefined` once it was. */
  next(body: Uint8Array | string): string | undefined {
    if (this.#left === 0) return undefined;
    const hint = this.#fixed ?? bodyHint(headOf(body));
    if (this.#given.has(hint)) return undefined;
    this.#given.add(hint);
    this.#left--;
    return hint;
  }
}

const SPACED = (which: string) =>
  `${which} contains whitespace, which webhook secrets never do: a space or line break was probably pasted into it. Copy the secret again.`;
const API_SECRET =
  'The configured webhook secret looks like an API secret (sk_...): webhooks are signed with the webhook secret (whsec_...).';
const BASE64 =
  'The body looks base64-encoded (as AWS API Gateway and Lambda Function URLs hand it over, with isBase64Encoded: true): verify the decoded bytes. @service-pay/lambda does this for you.';
const RESERIALIZED =
  'The body looks re-serialized (pretty-printed JSON): something parsed and re-wrote it before the handler. Pass the body exactly as received.';
const ANYTHING_ELSE =
  "Check that options.secret is this endpoint's webhook secret (not the API secret), and that the body reaches the handler exactly as received (nothing parses and re-serializes it).";
/** How many hints the body can lead to: BASE64, RESERIALIZED, ANYTHING_ELSE. */
const BODY_HINTS = 3;

function secretsHint(secrets: readonly string[]): string | undefined {
  const spaced = secrets.findIndex((secret) => /\s/.test(secret));
  if (spaced !== -1) return SPACED(secrets.length > 1 ? `options.secret[${spaced}]` : 'The configured webhook secret');
  if (secrets.some((secret) => secret.startsWith('sk_'))) return API_SECRET;
  return undefined;
}

function bodyHint(head: string): string {
  if (looksBase64Json(head)) return BASE64;
  if (looksPrettyPrinted(head)) return RESERIALIZED;
  return ANYTHING_ELSE;
}

/** Enough of the body to recognise its shape. */
const HEAD_BYTES = 4_096;

function headOf(body: Uint8Array | string): string {
  if (typeof body === 'string') return body.slice(0, HEAD_BYTES);
  let text = '';
  for (let i = 0; i < Math.min(body.length, HEAD_BYTES); i++) text += String.fromCharCode(body[i] as number);
  return text;
}

/** Base64 text (the whole head, padded to whole quads when it is the whole body) that decodes to a JSON object. */
function looksBase64Json(text: string): boolean {
  const trimmed = text.trim();
  // Linear: the class and `=` never overlap, so a failed match backtracks at most two characters.
  if (trimmed.length < 8 || !/^[A-Za-z0-9+/]+={0,2}$/.test(trimmed)) return false;
  try {
    return atob(trimmed.slice(0, trimmed.length - (trimmed.length % 4)))
      .trimStart()
      .startsWith('{');
  } catch {
    return false;
  }
}

/**
 * `/^\s*\{[\s\S]*\n\s+"/` in one pass: an object whose keys start lines after indentation. The RegExp
 * took time quadratic in the line breaks (`{` and 4,095 of them: 16-47 ms a request against 0.1-0.3 ms).
 * A quote ends a match when the run of whitespace before it holds a line break followed by more whitespace.
 */
export function looksPrettyPrinted(text: string): boolean {
  let i = 0;
  while (i < text.length && isSpace(text.charCodeAt(i))) i++;
  if (text.charCodeAt(i) !== 0x7b) return false; // {
  let broken = false; // a line break in the current run of whitespace
  let indented = false; // and whitespace after it
  for (i++; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (isSpace(c)) {
      if (broken) indented = true;
      if (c === 0x0a) broken = true;
    } else if (c === 0x22 && indented) {
      return true;
    } else {
      broken = false;
      indented = false;
    }
  }
  return false;
}

/** RegExp `\s`: ASCII whitespace, NBSP, the Unicode space separators, line and paragraph separators, BOM. */
function isSpace(c: number): boolean {
  if (c <= 0x20) return c === 0x20 || (c >= 0x09 && c <= 0x0d);
  if (c < 0xa0) return false;
  return (
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000 ||
    c === 0xfeff
  );
}
