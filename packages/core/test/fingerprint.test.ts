import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { PaidPayment } from '../src/index.js';
import { fingerprintOf } from '../src/index.js';
import { samplePaymentPaidEvent } from '../src/testing/index.js';

// The fields a webhook and a read payment both carry, and that the credit depends on: a webhook and a
// reconciliation of the same payment must agree on them, and nothing else.
const FIELDS = ['paymentId', 'orderNo', 'tokenSymbol', 'amount'] as const;
const TEXT_FIELDS = ['paymentId', 'orderNo', 'tokenSymbol'] as const;

const paid = (overrides: Partial<PaidPayment> = {}): PaidPayment => ({
  paymentId: 'p_123',
  orderNo: 'order-1',
  tokenSymbol: 'USDT',
  amount: '12.50',
  ...overrides,
});

describe('fingerprintOf', () => {
  it('is 11 base64url characters, and stable: stores keep it across versions', () => {
    // A golden value: if this changes, fingerprints already in stores stop matching (see fingerprint.ts).
    expect(fingerprintOf(paid())).toBe(fingerprintOf(paid()));
    expect(fingerprintOf(paid())).toBe('uwpe1_fCrHI');
  });

  it('is always 11 base64url characters', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), (orderNo, tokenSymbol) => {
        expect(fingerprintOf(paid({ orderNo, tokenSymbol }))).toMatch(/^[A-Za-z0-9_-]{11}$/);
      }),
    );
  });

  it('a webhook and the read of the same payment match: only the four shared fields count', () => {
    const event = samplePaymentPaidEvent({
      paymentId: 'p_123',
      orderNo: 'order-1',
      tokenSymbol: 'USDT',
      amount: '12.50',
    });
    expect(fingerprintOf(event)).toBe(fingerprintOf(paid()));
    const retry = { ...event, confirmations: 40, blockNum: '99', paidAt: '2027-01-01T00:00:00.000Z', txId: '0xother' };
    expect(fingerprintOf({ ...retry, paymentNetwork: 'ETH', amountRaw: '1', note: 'x' } as never)).toBe(
      fingerprintOf(event),
    );
  });

  it('hashes the amount in its one spelling: 12.50, 12.5 and 012.500 are one amount', () => {
    for (const amount of ['12.5', '012.500', '12.50000']) {
      expect(fingerprintOf(paid({ amount }))).toBe(fingerprintOf(paid({ amount: '12.50' })));
    }
    for (const [a, b] of [
      ['3', '3.000'],
      ['0.5', '00.50'],
      ['0', '0.0'],
    ] as const) {
      expect(fingerprintOf(paid({ amount: a }))).toBe(fingerprintOf(paid({ amount: b })));
    }
    expect(fingerprintOf(paid({ amount: '12.51' }))).not.toBe(fingerprintOf(paid({ amount: '12.5' })));
    expect(fingerprintOf(paid({ amount: '125' }))).not.toBe(fingerprintOf(paid({ amount: '12.5' })));
  });

  it('any spelling of an amount hashes like its canonical spelling (an independent RegExp oracle)', () => {
    const canonical = (amount: string) => {
      const [, int = '', frac = ''] = /^(\d+)(?:\.(\d+))?$/.exec(amount) ?? [];
      const i = int.replace(/^0+(?=\d)/, '');
      const f = frac.replace(/0+$/, '');
      return f.length > 0 ? `${i}.${f}` : i;
    };
    fc.assert(
      fc.property(fc.stringMatching(/^0{0,3}\d{1,6}(?:\.\d{1,6}0{0,3})?$/), (amount) => {
        expect(fingerprintOf(paid({ amount }))).toBe(fingerprintOf(paid({ amount: canonical(amount) })));
      }),
      { numRuns: 2000 },
    );
  });

  it('changes when any of the four fields changes, even by one character', () => {
    fc.assert(
      fc.property(fc.constantFrom(...TEXT_FIELDS), fc.string({ minLength: 1, maxLength: 40 }), (field, value) => {
        const base = paid({ [field]: value });
        expect(fingerprintOf({ ...base, [field]: `${value}!` })).not.toBe(fingerprintOf(base));
        expect(fingerprintOf({ ...base, [field]: value.slice(1) })).not.toBe(fingerprintOf(base));
      }),
      { numRuns: 2000 },
    );
    fc.assert(
      fc.property(fc.stringMatching(/^[1-9]\d{0,20}\.\d{0,5}[1-9]$/), (amount) => {
        expect(fingerprintOf(paid({ amount: `${amount}1` }))).not.toBe(fingerprintOf(paid({ amount })));
      }),
      { numRuns: 500 },
    );
  });

  it('tells apart the same characters split differently between two neighbouring fields', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: TEXT_FIELDS.length - 2 }),
        fc.string({ minLength: 2, maxLength: 30 }),
        fc.nat(),
        fc.nat(),
        (at, text, i, j) => {
          const [first, second] = [TEXT_FIELDS[at], TEXT_FIELDS[at + 1]] as [
            (typeof FIELDS)[number],
            (typeof FIELDS)[number],
          ];
          const k1 = i % (text.length + 1);
          const k2 = j % (text.length + 1);
          fc.pre(k1 !== k2);
          const split = (k: number) => paid({ [first]: text.slice(0, k), [second]: text.slice(k) });
          expect(fingerprintOf(split(k1))).not.toBe(fingerprintOf(split(k2)));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('spreads: no collision among 200,000 payments that differ in one counter-like field', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 100_000; i++) {
      seen.add(fingerprintOf(paid({ paymentId: `p_${i}` })));
      seen.add(fingerprintOf(paid({ amount: String(12_500_000 + i) })));
    }
    expect(seen.size).toBe(200_000);
  });

  it('reads every UTF-16 code unit, not just the low byte', () => {
    expect(fingerprintOf(paid({ orderNo: 'заказ-2' }))).not.toBe(fingerprintOf(paid({ orderNo: 'заказ-1' })));
    expect(fingerprintOf(paid({ orderNo: '\u0130' }))).not.toBe(fingerprintOf(paid({ orderNo: '\u0030' })));
  });
});
