import { WebhookError } from '../errors/webhook-error.js';

/** The exact bytes of a request body, as any runtime can give them. */
export type RawBody = Uint8Array | ArrayBuffer | string;

/**
 * Accepts the raw body in any byte form without copying it; refuses anything else (most often a body
 * that a JSON parser already turned into an object, whose original bytes are gone and cannot be
 * verified).
 */
export function toRawBytes(rawBody: unknown): Uint8Array | string {
  if (typeof rawBody === 'string' || rawBody instanceof Uint8Array) return rawBody;
  if (rawBody instanceof ArrayBuffer) return new Uint8Array(rawBody);
  if (ArrayBuffer.isView(rawBody)) return new Uint8Array(rawBody.buffer, rawBody.byteOffset, rawBody.byteLength);
  const what =
    rawBody === null || rawBody === undefined
      ? 'no body'
      : `a ${typeof rawBody === 'object' ? 'parsed object' : typeof rawBody}`;
  throw new WebhookError(
    'RAW_BODY_UNAVAILABLE',
    `The raw request body is needed to check the signature, but got ${what}. Pass the body exactly as received (string, Buffer, Uint8Array or ArrayBuffer): mount the webhook route before any JSON body parser (e.g. express.json()) or turn that parser off for this route.`,
  );
}

/** Whether the body is longer than `limit` bytes (UTF-8 for strings), counting only when it has to. */
export function exceedsBytes(body: Uint8Array | string, limit: number): boolean {
  if (typeof body !== 'string') return body.byteLength > limit;
  // A UTF-16 code unit is 1 to 3 UTF-8 bytes, which settles most strings without counting.
  if (body.length > limit) return true;
  if (body.length * 3 <= limit) return false;
  let n = 0;
  for (let i = 0; i < body.length; i++) {
    const c = body.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < body.length) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n > limit;
}
