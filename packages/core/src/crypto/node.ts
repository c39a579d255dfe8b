import { isAscii, isUtf8 } from 'node:buffer';
import * as nodeCrypto from 'node:crypto';
import { createHash, createHmac, randomUUID } from 'node:crypto';
import type { CryptoBackend } from './backend.js';
import { INITIAL_STATE } from './sha256.js';
import { compress, compressOuterBlock } from './sha256-compress.js';

/** `crypto.hash` as node implements it: any Buffer encoding for the digest (@types/node lists only four). */
type OneShotDigest = (algorithm: string, data: Buffer, outputEncoding: BufferEncoding) => string;

// crypto.hash (Node >= 20.12) is a one-shot digest without a Hash object per call. Older Node falls back
// to createHmac. This is a feature check inside the node build, not a runtime probe for node:crypto.
const oneShot = typeof nodeCrypto.hash === 'function' ? (nodeCrypto.hash as OneShotDigest) : undefined;

/**
 * Per secret: the HMAC inner pad, hashed with each delivery, and SHA-256's state after the outer pad's
 * block, from which each delivery's outer hash is one block (the inner digest and its padding).
 */
interface Pads {
  inner: Buffer;
  outerState: Int32Array;
}

const padsBySecret = new Map<string, Pads>();
/** The secret asked for last and its pads: one comparison a delivery where the Map's lookup hashes the key. */
let lastSecret: string | undefined;
let lastPads: Pads | undefined;
function padsFor(secret: string): Pads {
  if (secret === lastSecret) return lastPads as Pads;
  let pads = padsBySecret.get(secret);
  if (pads === undefined) {
    let key = Buffer.from(secret, 'utf8');
    if (key.length > 64) key = createHash('sha256').update(key).digest();
    const block = Buffer.alloc(64);
    key.copy(block);
    const inner = Buffer.alloc(64);
    const outerWords = new Int32Array(16);
    for (let i = 0; i < 64; i++) inner[i] = (block[i] as number) ^ 0x36;
    for (let i = 0; i < 16; i++) outerWords[i] = block.readInt32BE(i * 4) ^ 0x5c5c5c5c;
    pads = { inner, outerState: new Int32Array(8) };
    compress(INITIAL_STATE, outerWords, pads.outerState);
    // Secrets are few (rotation keeps two or three); the bound only guards against misuse.
    if (padsBySecret.size >= 64) padsBySecret.clear();
    padsBySecret.set(secret, pads);
  }
  lastSecret = secret;
  lastPads = pads;
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

/** The inner digest as eight big-endian words: the outer hash's block, whose padding `compressOuterBlock` knows. */
const innerDigest = new Int32Array(8);
/** Where the outer block's result is written: the secret's outer state is kept as it is. */
const outerState = new Int32Array(8);

/**
 * HMAC-SHA256 (RFC 2104: H(K^opad || H(K^ipad || text))) as SHA-256's eight state words. The inner hash is
 * one node:crypto call over the inner pad and the text, assembled in the scratch: no Hmac object and no
 * intermediate Buffer, the digest comes back as 16 UTF-16 characters. The outer hash starts from the outer
 * pad's state, kept per secret, and is one block compressed in JavaScript: cheaper than a second native call
 * (icount: about 2,900 instructions against 8,000; timed, under 470 ns against 540-750 on Node 20-26 on an
 * x86 with SHA extensions, which the native call uses).
 */
function hmac(secret: string, timestamp: string, body: Uint8Array | string): Digest {
  const bodyLength = typeof body === 'string' ? Buffer.byteLength(body, 'utf8') : body.byteLength;
  const length = 64 + timestamp.length + 1 + bodyLength;
  if (oneShot === undefined || length > SCRATCH_CAP) {
    const h = createHmac('sha256', secret).update(`${timestamp}.`);
    const digest = (typeof body === 'string' ? h.update(body, 'utf8') : h.update(body)).digest();
    return Array.from({ length: 8 }, (_, i) => digest.readInt32BE(i * 4));
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
  if (length !== signedLength) {
    signed = scratch.subarray(0, length);
    signedLength = length;
  }
  // As UTF-16LE, two bytes a character: half the characters to read as 'binary' (latin1) gives, each byte
  // pair swapped back into the big-endian words (icount: about 200 instructions less a delivery).
  const inner = oneShot('sha256', signed, 'utf16le');
  for (let i = 0, at = 0; i < 8; i++, at += 2) {
    const high = inner.charCodeAt(at);
    const low = inner.charCodeAt(at + 1);
    innerDigest[i] = ((high & 0xff) << 24) | ((high >>> 8) << 16) | ((low & 0xff) << 8) | (low >>> 8);
  }
  const state = outerState;
  compressOuterBlock(pads.outerState, innerDigest, state);
  // A plain array of its own (a rotation keeps several): optimized code makes one inline, where a typed
  // array's copy is a builtin call (icount: about 340 instructions a delivery).
  return [state[0], state[1], state[2], state[3], state[4], state[5], state[6], state[7]] as number[];
}

/** The digest as lowercase hex, for the test signer. */
function hmacHex(secret: string, timestamp: string, body: Uint8Array | string): string {
  let hex = '';
  for (const word of hmac(secret, timestamp, body)) hex += (word >>> 0).toString(16).padStart(8, '0');
  return hex;
}

/** Where a received hex signature is decoded (32 bytes), and read back as eight big-endian words. */
const received = Buffer.alloc(32);
const receivedWords = new DataView(received.buffer, received.byteOffset, 32);

/**
 * Whether the 64 hex digits at `offset` of `source` are `digest`. The received hex is decoded natively
 * (upper or lower case), then every word is compared without a data-dependent branch. Reading 64
 * characters of a header one by one cost more than decoding it (icount: a header built by concatenation is
 * read through its parts), and the digest's words are cheaper to keep than its hex.
 */
function digestMatches(digest: Digest, source: string, offset: number): boolean {
  if (source.length - offset < 64) return false;
  // Only the received value decides how much is decoded: it stops at the first non-hex character.
  if (received.write(source.slice(offset, offset + 64), 0, 'hex') !== 32) return false;
  let diff = 0;
  for (let i = 0; i < 8; i++) diff |= (digest[i] as number) ^ receivedWords.getInt32(i * 4);
  return diff === 0;
}

/** What this backend's `signPayload` gives: HMAC-SHA256 as SHA-256's eight state words, signed 32-bit. */
export type Digest = readonly number[];

/** The node:crypto backend: everything synchronous, no copies of the body beyond the one signed buffer. */
export const cryptoBackend: CryptoBackend<Digest> = {
  signPayload: hmac,
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
