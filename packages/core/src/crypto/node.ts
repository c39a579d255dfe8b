import { isAscii, isUtf8 } from 'node:buffer';
import * as nodeCrypto from 'node:crypto';
import { createHash, createHmac, randomUUID } from 'node:crypto';
import type { CryptoBackend } from './backend.js';

// crypto.hash (Node >= 20.12) is a one-shot digest without a Hash object per call. Older Node falls back
// to createHmac. This is a feature check inside the node build, not a runtime probe for node:crypto.
const oneShot = typeof nodeCrypto.hash === 'function' ? nodeCrypto.hash : undefined;

/** Per secret: the HMAC inner pad, and a 96-byte buffer holding the outer pad with room for the inner digest. */
interface Pads {
  inner: Buffer;
  outer: Buffer;
}
const padsBySecret = new Map<string, Pads>();
function padsFor(secret: string): Pads {
  let pads = padsBySecret.get(secret);
  if (pads === undefined) {
    let key = Buffer.from(secret, 'utf8');
    if (key.length > 64) key = createHash('sha256').update(key).digest();
    const block = Buffer.alloc(64);
    key.copy(block);
    pads = { inner: Buffer.alloc(64), outer: Buffer.alloc(96) };
    for (let i = 0; i < 64; i++) {
      pads.inner[i] = (block[i] as number) ^ 0x36;
      pads.outer[i] = (block[i] as number) ^ 0x5c;
    }
    // Secrets are few (rotation keeps two or three); the bound only guards against misuse.
    if (padsBySecret.size >= 64) padsBySecret.clear();
    padsBySecret.set(secret, pads);
  }
  return pads;
}

// The signed text is assembled here, behind the inner pad, and hashed in one call. Reused across calls
// (everything below is synchronous); bodies past the cap take the streaming createHmac path instead.
const SCRATCH_CAP = 1024 * 1024;
let scratch = Buffer.allocUnsafe(16 * 1024);
/**
 * Whose inner pad the scratch's first 64 bytes hold. With one secret (the usual case) it is copied once,
 * not on every delivery (a native call each time; bench: 1-3% of a verification).
 */
let scratchPads: Pads | undefined;
/**
 * The view of the scratch that was last hashed, kept while bodies keep one length (a sender's deliveries
 * mostly do): a subarray is a new typed array, about 500 instructions a delivery to make and hand over.
 */
let signed = scratch.subarray(0, 0);
let signedLength = 0;

/**
 * HMAC-SHA256 as two one-shot SHA-256 calls (RFC 2104: H(K^opad || H(K^ipad || text))). About 1.6x the
 * speed of createHmac on a webhook-sized body, because no Hmac object or intermediate Buffer is made: the
 * inner digest comes back as a latin1 ('binary') string and is written straight behind the outer pad.
 */
function hmac(secret: string, timestamp: string, body: Uint8Array | string, encoding: 'hex' | 'binary'): string {
  const bodyLength = typeof body === 'string' ? Buffer.byteLength(body, 'utf8') : body.byteLength;
  const length = 64 + timestamp.length + 1 + bodyLength;
  if (oneShot === undefined || length > SCRATCH_CAP) {
    const h = createHmac('sha256', secret).update(`${timestamp}.`);
    return (typeof body === 'string' ? h.update(body, 'utf8') : h.update(body)).digest(encoding);
  }
  if (length > scratch.length) {
    scratch = Buffer.allocUnsafe(Math.min(SCRATCH_CAP, 2 ** Math.ceil(Math.log2(length))));
    scratchPads = undefined;
    signedLength = -1;
  }
  const pads = padsFor(secret);
  if (pads !== scratchPads) {
    pads.inner.copy(scratch, 0);
    scratchPads = pads;
  }
  // The timestamp is a few ASCII digits: a loop costs less than Buffer#write's native call (icount).
  let offset = 64;
  for (let i = 0; i < timestamp.length; i++) scratch[offset++] = timestamp.charCodeAt(i);
  scratch[offset++] = 0x2e; // '.'
  if (typeof body === 'string') scratch.write(body, offset, 'utf8');
  else scratch.set(body, offset);
  // 'binary' is latin1: one char per byte, so the digest round-trips exactly.
  if (length !== signedLength) {
    signed = scratch.subarray(0, length);
    signedLength = length;
  }
  const inner = oneShot('sha256', signed, 'binary');
  pads.outer.write(inner, 64, 'binary');
  return oneShot('sha256', pads.outer, encoding);
}

/** The digest as 32 latin1 characters: cheaper to make than hex, and compared as bytes (`digestMatches`). */
const signRaw = (secret: string, timestamp: string, body: Uint8Array | string): string =>
  hmac(secret, timestamp, body, 'binary');
const hmacHex = (secret: string, timestamp: string, body: Uint8Array | string): string =>
  hmac(secret, timestamp, body, 'hex');

/** Where a received hex signature is decoded (32 bytes), to be compared with a raw digest. */
const received = Buffer.alloc(32);

/**
 * Whether the 64 hex digits at `offset` of `source` are `digest` (32 latin1 characters). The received hex is
 * decoded natively (upper or lower case), then every byte is compared without a data-dependent branch.
 * Reading 64 characters of a header one by one cost more than decoding it (icount: a header built by
 * concatenation is read through its parts), and the raw digest is cheaper to make than its hex.
 */
function digestMatches(digest: string, source: string, offset: number): boolean {
  if (source.length - offset < 64) return false;
  // Only the received value decides how much is decoded: it stops at the first non-hex character.
  if (received.write(source.slice(offset, offset + 64), 0, 'hex') !== 32) return false;
  let diff = 0;
  for (let i = 0; i < 32; i++) diff |= digest.charCodeAt(i) ^ (received[i] as number);
  return diff === 0;
}

/** The node:crypto backend: everything synchronous, no copies of the body beyond the one signed buffer. */
export const cryptoBackend: CryptoBackend = {
  signPayload: signRaw,
  digestMatches,
  signPayloadHexSync: hmacHex,
  decodeUtf8: (bytes) => {
    const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    // ASCII (what the service sends) is its own UTF-8 and latin1: the cheaper decode, and no U+FFFD to look for.
    if (isAscii(buf)) return buf.toString('latin1');
    const text = buf.toString('utf8');
    // Invalid bytes decode to U+FFFD; only then is the (rarer) full validity check worth its pass.
    return !text.includes('\uFFFD') || isUtf8(buf) ? text : undefined;
  },
  randomToken: () => randomUUID(),
};
