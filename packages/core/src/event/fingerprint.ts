import type { PaidPayment } from './paid-payment.js';

/**
 * A 64-bit hash of the fields of a payment that both a webhook and a read payment carry and that a credit
 * depends on (`paymentId`, `orderNo`, `tokenSymbol`, `amount`), as 11 base64url characters. Two attempts for
 * one dedupe key with different fingerprints mean the service said two different things about one payment:
 * a conflict to alert on, never a duplicate to swallow silently. Because a webhook and a reconciliation
 * (`GET /v1/payments/:id`) hash the same fields, a webhook after a reconciliation is a duplicate, and the
 * reverse. The amount is hashed in its canonical spelling (`12.50` and `12.5` are one amount).
 *
 * Not a cryptographic hash, on purpose. Every field it covers is signed (or read over the authenticated
 * API), so only the payment service itself can choose them, and whoever can sign can do far worse than
 * make two payloads collide; what the fingerprint must catch is an accidental difference, which 64 bits
 * miss with odds of 2^-64. In exchange it costs a third of a SHA-256 through node:crypto (whose per-call
 * overhead dominates on short input), runs the same on every runtime without Web Crypto's promise, and is
 * 11 characters to keep per key in memory or Redis instead of 43.
 *
 * The mixing is cyrb53's (bryc, public domain): two 32-bit lanes with different odd multipliers, per UTF-16
 * code unit, then a final avalanche that couples the lanes; here both lanes are kept (64 bits), and each
 * field is preceded by its length so that no two different field lists read as the same stream.
 *
 * Changing this function changes what stores hold: a fingerprint written by one version is compared with
 * one computed by the next, so a new algorithm or field list needs a new prefix and a migration, never a
 * silent switch. (Revision 2 changed the field list before any release, so it carries no prefix.)
 *
 * @example
 * ```ts
 * fingerprintOf({ paymentId: 'p_1', orderNo: 'o-1', tokenSymbol: 'USDT', amount: '12.50' }) ===
 *   fingerprintOf({ paymentId: 'p_1', orderNo: 'o-1', tokenSymbol: 'USDT', amount: '12.5' }); // true
 * ```
 */
export function fingerprintOf(payment: PaidPayment): string {
  const lanes = new Lanes();
  lanes.absorb(payment.paymentId);
  lanes.absorb(payment.orderNo);
  lanes.absorb(payment.tokenSymbol);
  absorbAmount(lanes, payment.amount);
  return lanes.digest();
}

/**
 * Absorbs the amount in its canonical spelling without making the string: no
 * leading zeros before the integer digit, no trailing zeros in the fraction, no dot without a fraction.
 * Most amounts carry trailing zeros (`12.50`), so this runs on nearly every delivery.
 */
function absorbAmount(lanes: Lanes, amount: string): void {
  const dot = amount.indexOf('.');
  const intEnd = dot === -1 ? amount.length : dot;
  let from = 0;
  while (from < intEnd - 1 && amount.charCodeAt(from) === 0x30) from++;
  let to = amount.length;
  if (dot !== -1) {
    while (to > dot + 1 && amount.charCodeAt(to - 1) === 0x30) to--;
    if (to === dot + 1) to = dot;
  }
  lanes.absorb(amount, from, to);
}

class Lanes {
  a = 0xdeadbeef;
  b = 0x41c6ce57;

  /** Absorbs `field` (or its characters from `from` to `to`), preceded by that length. */
  absorb(field: string, from = 0, to = field.length): void {
    let a = Math.imul(this.a ^ (to - from), 2654435761);
    let b = Math.imul(this.b ^ (to - from), 1597334677);
    for (let i = from; i < to; i++) {
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
