import { isDigits } from './ascii.js';
import { WebhookError } from './errors.js';

/** A parsed `X-Service-Signature` header: `t=<unix seconds>,v1=<hex>[,v1=<hex>...]`. */
export interface ParsedSignatureHeader {
  /** The `t` value exactly as sent; it is part of the signed text. */
  timestampText: string;
  timestamp: number;
  /** Every `v1` value, each 64 hex digits (unless `unchecked`). */
  signatures: string[];
  /**
   * Set on the fast path, where the one `v1` was not checked to be hex: a constant-time match proves it is
   * (see timingSafeEqualHex), and only when nothing matches does `assertWellFormed` decide between a
   * malformed header and a wrong signature. The answer is the same as checking first, for every input.
   */
  unchecked?: string;
}

// Bounds keep a hostile header from costing more than a few comparisons.
const MAX_HEADER_LENGTH = 4096;
const MAX_V1 = 8;
// Unix seconds: up to 12 digits (year 33658), enough for any clock and bounded against absurd input.
const MAX_TIMESTAMP_DIGITS = 12;
function isHex64(value: string): boolean {
  if (value.length !== 64) return false;
  for (let i = 0; i < 64; i++) {
    const c = value.charCodeAt(i);
    const lower = c | 0x20; // a-f from A-F; checked apart from digits so no control character folds into one
    if (!((c >= 0x30 && c <= 0x39) || (lower >= 0x61 && lower <= 0x66))) return false;
  }
  return true;
}

/**
 * Strict parse: exactly one `t` of digits only; every `v1` is 64 hex digits; other schemes (a future `v2`,
 * a test `v0`) are ignored so the sender can add schemes without breaking us.
 */
export function parseSignatureHeader(header: string | undefined, strict = false): ParsedSignatureHeader {
  if (header === undefined || header.trim() === '') {
    throw new WebhookError(
      'MISSING_SIGNATURE',
      'No X-Service-Signature header. Is this request from the payment service, and does a proxy strip the header?',
    );
  }
  if (header.length > MAX_HEADER_LENGTH) {
    throw malformed(`it is ${header.length} characters long (at most ${MAX_HEADER_LENGTH})`);
  }
  // Fast path for exactly what the service sends, `t=<digits>,v1=<64 hex>`; anything else (spaces, other
  // schemes, several v1, every malformed header) takes the general scan below.
  const comma = header.indexOf(',');
  if (
    !strict &&
    comma > 2 &&
    header.length === comma + 68 &&
    header.startsWith('t=') &&
    header.startsWith('v1=', comma + 1)
  ) {
    const t = header.slice(2, comma);
    const v1 = header.slice(comma + 4);
    if (isDigits(t, MAX_TIMESTAMP_DIGITS) && v1.indexOf(',') === -1)
      return { timestampText: t, timestamp: Number(t), signatures: [v1], unchecked: header };
  }
  let timestampText: string | undefined;
  const signatures: string[] = [];
  const otherSchemes: string[] = [];
  // A hand-written scan rather than split/trim: this runs on every request, before anything else.
  for (let start = 0; start <= header.length; ) {
    let end = header.indexOf(',', start);
    if (end === -1) end = header.length;
    let from = start;
    let to = end;
    while (from < to && isBlank(header.charCodeAt(from))) from++;
    while (to > from && isBlank(header.charCodeAt(to - 1))) to--;
    const eq = header.indexOf('=', from);
    if (eq <= from || eq >= to)
      throw malformed(`expected key=value items separated by commas, got ${describe(header.slice(from, to))}`);
    const value = header.slice(eq + 1, to);
    const keyLength = eq - from;
    if (keyLength === 1 && header.charCodeAt(from) === 0x74 /* t */) {
      if (timestampText !== undefined) throw malformed('it has more than one t= item');
      if (!isDigits(value, MAX_TIMESTAMP_DIGITS)) throw malformed('t= must be Unix seconds, digits only');
      timestampText = value;
    } else if (
      keyLength === 2 &&
      header.charCodeAt(from) === 0x76 /* v */ &&
      header.charCodeAt(from + 1) === 0x31 /* 1 */
    ) {
      if (!isHex64(value)) throw malformed(`every v1= must be 64 hex digits, got ${value.length} characters`);
      if (signatures.length === MAX_V1) throw malformed(`it has more than ${MAX_V1} v1= items`);
      signatures.push(value);
    } else if (otherSchemes.length < 8) {
      otherSchemes.push(describe(header.slice(from, eq)));
    }
    start = end + 1;
  }
  if (timestampText === undefined) throw malformed('it has no t= item');
  if (signatures.length === 0) {
    const seen = otherSchemes.length > 0 ? ` (it has only: ${otherSchemes.join(', ')})` : '';
    throw malformed(`it has no v1= signature${seen}`);
  }
  return { timestampText, timestamp: Number(timestampText), signatures };
}

/** Throws MALFORMED_SIGNATURE for a fast-path header that was not fully checked and is not well-formed. */
export function assertWellFormed(parsed: ParsedSignatureHeader): void {
  if (parsed.unchecked !== undefined) parseSignatureHeader(parsed.unchecked, true);
}

const isBlank = (c: number) => c === 0x20 || c === 0x09;

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
