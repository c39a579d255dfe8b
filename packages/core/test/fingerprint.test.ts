import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { PaymentPaidEvent } from '../src/event.js';
import { fingerprintOf } from '../src/fingerprint.js';
import { samplePaymentPaidEvent } from '../src/testing/index.js';

const FIELDS = ['paymentId', 'orderNo', 'tokenSymbol', 'paymentNetwork', 'amount', 'amountRaw', 'txId'] as const;

describe('fingerprintOf', () => {
  it('is 11 base64url characters, and stable: stores keep it across versions', () => {
    const event = samplePaymentPaidEvent({
      paymentId: 'p_123',
      orderNo: 'order-1',
      tokenSymbol: 'USDT',
      paymentNetwork: 'TRON',
      amount: '12.50',
      amountRaw: '12500000',
      txId: '0xabc',
    });
    // A golden value: if this changes, fingerprints already in stores stop matching (see fingerprint.ts).
    expect(fingerprintOf(event)).toBe('VWdg5gO_DaK');
  });

  it('is always 11 base64url characters', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), (orderNo, txId) => {
        expect(fingerprintOf(samplePaymentPaidEvent({ orderNo, txId }))).toMatch(/^[A-Za-z0-9_-]{11}$/);
      }),
    );
  });

  it('ignores the fields a retry may change (confirmations, blockNum, paidAt) and unknown extras', () => {
    const event = samplePaymentPaidEvent();
    const later = { ...event, confirmations: 40, blockNum: '99', paidAt: '2027-01-01T00:00:00.000Z', note: 'x' };
    expect(fingerprintOf(later)).toBe(fingerprintOf(event));
  });

  it('changes when any signed business field changes, even by one character', () => {
    fc.assert(
      fc.property(fc.constantFrom(...FIELDS), fc.string({ minLength: 1, maxLength: 40 }), (field, value) => {
        const base = samplePaymentPaidEvent({ [field]: value } as Partial<PaymentPaidEvent>);
        expect(fingerprintOf({ ...base, [field]: `${value}!` })).not.toBe(fingerprintOf(base));
        expect(fingerprintOf({ ...base, [field]: value.slice(1) })).not.toBe(fingerprintOf(base));
      }),
      { numRuns: 2000 },
    );
  });

  it('tells apart the same characters split differently between two neighbouring fields', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: FIELDS.length - 2 }),
        fc.string({ minLength: 2, maxLength: 30 }),
        fc.nat(),
        fc.nat(),
        (at, text, i, j) => {
          const [first, second] = [FIELDS[at], FIELDS[at + 1]] as [(typeof FIELDS)[number], (typeof FIELDS)[number]];
          const k1 = i % (text.length + 1);
          const k2 = j % (text.length + 1);
          fc.pre(k1 !== k2);
          const base = samplePaymentPaidEvent();
          const split = (k: number) => ({ ...base, [first]: text.slice(0, k), [second]: text.slice(k) });
          expect(fingerprintOf(split(k1))).not.toBe(fingerprintOf(split(k2)));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('spreads: no collision among 200,000 payments that differ in one counter-like field', () => {
    const seen = new Set<string>();
    const event = samplePaymentPaidEvent();
    for (let i = 0; i < 100_000; i++) {
      seen.add(fingerprintOf({ ...event, paymentId: `p_${i}` }));
      seen.add(fingerprintOf({ ...event, amountRaw: String(12_500_000 + i) }));
    }
    expect(seen.size).toBe(200_000);
  });

  it('reads every UTF-16 code unit, not just the low byte', () => {
    const event = samplePaymentPaidEvent({ orderNo: 'заказ-1' });
    expect(fingerprintOf({ ...event, orderNo: 'заказ-2' })).not.toBe(fingerprintOf(event));
    expect(fingerprintOf({ ...event, orderNo: '\u0130' })).not.toBe(fingerprintOf({ ...event, orderNo: '\u0030' }));
  });
});
