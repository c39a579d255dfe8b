import { WebhookError } from './errors.js';

/** A parsed `X-Service-Signature` header: `t=<unix seconds>,v1=<hex>[,v1=<hex>...]`. */
export interface ParsedSignatureHeader {
  /** The `t` value exactly as sent; it is part of the signed text. */
  timestampText: string;
  timestamp: number;
  /** Every `v1` value, each 64 hex digits. */
  signatures: string[];
}

// Bounds keep a hostile header from costing more than a few comparisons.
const MAX_HEADER_LENGTH = 4096;
const MAX_V1 = 8;
const DIGITS = /^\d{1,12}$/;
const HEX64 = /^[0-9a-fA-F]{64}$/;

/**
 * Strict parse: exactly one `t` of digits only; every `v1` is 64 hex digits; other schemes (a future `v2`,
 * a test `v0`) are ignored so the sender can add schemes without breaking us.
 */
export function parseSignatureHeader(header: string | undefined): ParsedSignatureHeader {
  if (header === undefined || header.trim() === '') {
    throw new WebhookError(
      'MISSING_SIGNATURE',
      'No X-Service-Signature header. Is this request from the payment service, and does a proxy strip the header?',
    );
  }
  if (header.length > MAX_HEADER_LENGTH) {
    throw malformed(`it is ${header.length} characters long (at most ${MAX_HEADER_LENGTH})`);
  }
  let timestampText: string | undefined;
  const signatures: string[] = [];
  const otherSchemes: string[] = [];
  for (const rawItem of header.split(',')) {
    const item = rawItem.trim();
    const eq = item.indexOf('=');
    if (eq <= 0) throw malformed(`expected key=value items separated by commas, got "${describe(item)}"`);
    const key = item.slice(0, eq);
    const value = item.slice(eq + 1);
    if (key === 't') {
      if (timestampText !== undefined) throw malformed('it has more than one t= item');
      if (!DIGITS.test(value)) throw malformed('t= must be Unix seconds, digits only');
      timestampText = value;
    } else if (key === 'v1') {
      if (!HEX64.test(value)) throw malformed(`every v1= must be 64 hex digits, got ${value.length} characters`);
      if (signatures.length === MAX_V1) throw malformed(`it has more than ${MAX_V1} v1= items`);
      signatures.push(value);
    } else if (otherSchemes.length < 8) {
      otherSchemes.push(key);
    }
  }
  if (timestampText === undefined) throw malformed('it has no t= item');
  if (signatures.length === 0) {
    const seen = otherSchemes.length > 0 ? ` (it has only: ${otherSchemes.join(', ')})` : '';
    throw malformed(`it has no v1= signature${seen}`);
  }
  return { timestampText, timestamp: Number(timestampText), signatures };
}

function malformed(why: string): WebhookError {
  return new WebhookError(
    'MALFORMED_SIGNATURE',
    `X-Service-Signature must look like "t=<unix seconds>,v1=<64 hex digits>", but ${why}.`,
  );
}

// Keys and junk may be echoed, but never a value (it could be a signature).
function describe(item: string): string {
  const key = item.split('=')[0] ?? '';
  return key.length > 20 ? `${key.slice(0, 20)}…` : key;
}
