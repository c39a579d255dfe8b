import { WebhookError } from '../errors/webhook-error.js';
import { digitsValue, isHex } from '../util/ascii.js';

/**
 * A parsed `X-Service-Signature` header: `t=<unix seconds>,v1=<hex>[,v1=<hex>...]`.
 *
 * @example
 * ```ts
 * const header: SignatureHeader = { timestampText: '1763719200', timestamp: 1763719200, text: 't=1763719200,v1=9f...', v1At: [16] };
 * ```
 */
export interface SignatureHeader {
  /** The `t` value exactly as sent; it is part of the signed text. */
  timestampText: string;
  timestamp: number;
  /** The header as received. */
  text: string;
  /**
   * Where each `v1` value starts in `text`; each is 64 hex digits (but see `hexUnchecked`). Offsets, not
   * slices: the signature is compared in place (see timingSafeEqualHex).
   */
  v1At: number[];
  /**
   * Set on the fast path, where the one `v1` was not yet checked to be hex: a constant-time match with a
   * computed digest proves it is (see timingSafeEqualHex), so the check is left to the rare case where
   * nothing matches, and then decides between MALFORMED_SIGNATURE and SIGNATURE_MISMATCH. Same answers as
   * checking first, for every input; one 64-character loop fewer per delivery.
   */
  hexUnchecked?: true;
}

// Bounds keep a hostile header from costing more than a few comparisons.
const MAX_HEADER_LENGTH = 4096;
const MAX_V1 = 8;
// Unix seconds: up to 12 digits (year 33658), enough for any clock and bounded against absurd input.
const MAX_TIMESTAMP_DIGITS = 12;
const V1_LENGTH = 64;

/**
 * Parses the header once, strictly: exactly one `t` of digits only; every `v1` is 64 hex digits; other
 * schemes (a future `v2`, a test `v0`) are ignored so the sender can add schemes without breaking us. No
 * whitespace is trimmed or skipped anywhere: `t=1, v1=...` is malformed, as in Stripe's parser. A missing
 * or empty header is MISSING_SIGNATURE; anything else wrong is MALFORMED_SIGNATURE.
 */
export function parseSignatureHeader(header: string | undefined): SignatureHeader {
  if (header === undefined || header.length === 0) {
    throw new WebhookError(
      'MISSING_SIGNATURE',
      'No X-Service-Signature header. Is this request from the payment service, and does a proxy strip the header?',
    );
  }
  if (header.length > MAX_HEADER_LENGTH) {
    throw malformed(`it is ${header.length} characters long (at most ${MAX_HEADER_LENGTH})`);
  }
  // Fast path for exactly what the service sends, `t=<digits>,v1=<64 hex>`; anything else (other schemes,
  // several v1, every malformed header) takes the general scan below, which gives the same answer.
  const comma = header.indexOf(',');
  if (
    comma > 2 &&
    header.length === comma + 4 + V1_LENGTH &&
    header.startsWith('t=') &&
    header.startsWith('v1=', comma + 1)
  ) {
    const t = header.slice(2, comma);
    const timestamp = digitsValue(t, MAX_TIMESTAMP_DIGITS);
    if (timestamp >= 0 && header.indexOf(',', comma + 4) === -1) {
      return { timestampText: t, timestamp, text: header, v1At: [comma + 4], hexUnchecked: true };
    }
  }
  let timestampText: string | undefined;
  let timestamp = -1;
  const v1At: number[] = [];
  const otherSchemes: string[] = [];
  // A hand-written scan rather than split: this runs on every request, before anything else.
  for (let start = 0; start <= header.length; ) {
    let end = header.indexOf(',', start);
    if (end === -1) end = header.length;
    const eq = header.indexOf('=', start);
    if (eq <= start || eq >= end) {
      throw malformed(`expected key=value items separated by commas, got ${describe(header.slice(start, end))}`);
    }
    const key = header.slice(start, eq);
    const value = header.slice(eq + 1, end);
    if (hasBlank(key) || hasBlank(value)) throw malformed('it contains whitespace, which the format does not allow');
    if (key === 't') {
      if (timestampText !== undefined) throw malformed('it has more than one t= item');
      timestamp = digitsValue(value, MAX_TIMESTAMP_DIGITS);
      if (timestamp < 0) throw malformed('t= must be Unix seconds, digits only');
      timestampText = value;
    } else if (key === 'v1') {
      if (!isHex(value, V1_LENGTH)) throw malformed(`every v1= must be 64 hex digits, got ${value.length} characters`);
      if (v1At.length === MAX_V1) throw malformed(`it has more than ${MAX_V1} v1= items`);
      v1At.push(eq + 1);
    } else if (otherSchemes.length < 8) {
      otherSchemes.push(describe(key));
    }
    start = end + 1;
  }
  if (timestampText === undefined) throw malformed('it has no t= item');
  if (v1At.length === 0) {
    const seen = otherSchemes.length > 0 ? ` (it has only: ${otherSchemes.join(', ')})` : '';
    throw malformed(`it has no v1= signature${seen}`);
  }
  return { timestampText, timestamp, text: header, v1At };
}

/** For a fast-path header whose signature matched nothing: is it malformed, rather than just wrong? */
export function assertSignaturesAreHex(header: SignatureHeader): void {
  if (header.hexUnchecked !== true) return;
  const at = header.v1At[0] as number;
  const v1 = header.text.slice(at);
  if (hasBlank(v1)) throw malformed('it contains whitespace, which the format does not allow');
  if (!isHex(v1, V1_LENGTH)) throw malformed(`every v1= must be 64 hex digits, got ${v1.length} characters`);
}

function hasBlank(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) return true;
  }
  return false;
}

function malformed(why: string): WebhookError {
  return new WebhookError(
    'MALFORMED_SIGNATURE',
    `X-Service-Signature must look like "t=<unix seconds>,v1=<64 hex digits>", but ${why}.`,
  );
}

// Only a short scheme-like name is ever echoed: anything longer could be (part of) a signature.
function describe(text: string): string {
  return /^[A-Za-z0-9_-]{1,8}$/.test(text) ? text : `<${text.length} characters>`;
}
