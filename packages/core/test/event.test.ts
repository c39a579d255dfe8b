import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isPaymentPaidEvent, problemsOf } from '../src/event.js';
import { samplePaymentPaidEvent } from '../src/testing/index.js';

// The fast one-pass check and the check that words each problem must agree on every input.
const near = <T>(valid: T[], other: fc.Arbitrary<unknown>) => fc.oneof(fc.constantFrom(...valid), other);
const text = fc.oneof(fc.string({ maxLength: 300 }), fc.constant(''), fc.constant(null), fc.integer());
const digits = fc.oneof(
  fc.stringMatching(/^\d{1,80}$/),
  fc.stringMatching(/^-?\d*\.?\d*$/),
  fc.integer(),
  fc.constant(null),
);

const payload = fc.record({
  event: fc.constant('payment.paid'),
  paymentId: near(
    ['p_1', 'p_abc'],
    fc.oneof(
      fc.string({ maxLength: 260 }).map((s) => `p_${s}`),
      fc.string(),
      fc.constant('p_'),
    ),
  ),
  orderNo: near(['order-1'], text),
  txId: near(['0xabc'], text),
  tokenSymbol: near(['USDT'], text),
  paymentNetwork: near(['TRON'], text),
  amount: near(['12.50', '0', '1'], fc.oneof(digits, fc.stringMatching(/^\d+\.\d+$/))),
  amountRaw: near(['12500000'], digits),
  blockNum: near(['61234567', null], digits),
  confirmations: near([0, 20, null], fc.oneof(fc.integer({ min: -5, max: 5 }), fc.double(), fc.string())),
  paidAt: near(
    ['2026-11-21T10:00:00.000Z', '2028-02-29T00:00:00.000Z'],
    fc.oneof(
      fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
      fc.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      fc.string(),
    ),
  ),
});

describe('payment.paid validation', () => {
  it('a sample event is valid', () => {
    const event = samplePaymentPaidEvent() as unknown as Record<string, unknown>;
    expect(isPaymentPaidEvent(event)).toBe(true);
    expect(problemsOf(event)).toEqual([]);
  });

  it('the fast check and the worded check agree on any payload', () => {
    fc.assert(
      fc.property(payload, (body) => {
        expect(isPaymentPaidEvent(body)).toBe(problemsOf(body).length === 0);
      }),
      { numRuns: 3000 },
    );
  });
});
