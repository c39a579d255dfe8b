import type { PaymentPaidEvent } from './event.js';

/**
 * A 64-bit hash of the signed business fields of a payment, as 11 base64url characters. Two deliveries of one dedupe
 * key with different fingerprints mean the sender said two different things about one payment: a conflict
 * to alert on, never a duplicate to swallow silently.
 *
 * Not a cryptographic hash, on purpose. Every field it covers is signed, so only the payment service itself
 * can choose them, and whoever can sign can do far worse than make two payloads collide; what the
 * fingerprint must catch is an accidental difference, which 64 bits miss with odds of 2^-64. In exchange
 * it costs a third of a SHA-256 through node:crypto (whose per-call overhead dominates on ~150 characters),
 * runs the same on every runtime without Web Crypto's promise, and is 11 characters to keep per key in
 * memory or Redis instead of 43.
 *
 * The mixing is cyrb53's (bryc, public domain): two 32-bit lanes with different odd multipliers, per UTF-16
 * code unit, then a final avalanche that couples the lanes; here both lanes are kept (64 bits), and each
 * field is preceded by its length so that no two different field lists read as the same stream.
 *
 * Changing this function changes what stores hold: a fingerprint written by one version is compared with
 * one computed by the next, so a new algorithm needs a new prefix and a migration, never a silent switch.
 */
export function fingerprintOf(event: PaymentPaidEvent): string {
  const lanes = new Lanes();
  lanes.absorb(event.paymentId);
  lanes.absorb(event.orderNo);
  lanes.absorb(event.tokenSymbol);
  lanes.absorb(event.paymentNetwork);
  lanes.absorb(event.amount);
  lanes.absorb(event.amountRaw);
  lanes.absorb(event.txId);
  return lanes.digest();
}

class Lanes {
  a = 0xdeadbeef;
  b = 0x41c6ce57;

  absorb(field: string): void {
    let a = Math.imul(this.a ^ field.length, 2654435761);
    let b = Math.imul(this.b ^ field.length, 1597334677);
    for (let i = 0; i < field.length; i++) {
      const c = field.charCodeAt(i);
      a = Math.imul(a ^ c, 2654435761);
      b = Math.imul(b ^ c, 1597334677);
    }
    this.a = a;
    this.b = b;
  }

  /** 64 bits as 11 base64url characters, made in one flat string (what a store keeps for days). */
  digest(): string {
    let { a, b } = this;
    a = Math.imul(a ^ (a >>> 16), 2246822507);
    a ^= Math.imul(b ^ (b >>> 13), 3266489909);
    b = Math.imul(b ^ (b >>> 16), 2246822507);
    b ^= Math.imul(a ^ (a >>> 13), 3266489909);
    return String.fromCharCode(
      BASE64URL[b >>> 26] as number,
      BASE64URL[(b >>> 20) & 63] as number,
      BASE64URL[(b >>> 14) & 63] as number,
      BASE64URL[(b >>> 8) & 63] as number,
      BASE64URL[(b >>> 2) & 63] as number,
      BASE64URL[((b & 3) << 4) | (a >>> 28)] as number,
      BASE64URL[(a >>> 22) & 63] as number,
      BASE64URL[(a >>> 16) & 63] as number,
      BASE64URL[(a >>> 10) & 63] as number,
      BASE64URL[(a >>> 4) & 63] as number,
      BASE64URL[a & 15] as number,
    );
  }
}

// Character codes of the base64url alphabet. One String.fromCharCode call makes a flat string; joining
// pieces of more than 12 characters would make a V8 rope that keeps every piece alive in the store.
const BASE64URL = Uint8Array.from('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_', (c) =>
  c.charCodeAt(0),
);
