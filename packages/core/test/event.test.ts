import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { assertPaymentPaidEvent } from '../src/event/payment-paid-event.js';
import { WebhookError } from '../src/index.js';
import { samplePaymentPaidEvent } from '../src/testing/index.js';

// Spec 2.3 written out again, independently, with RegExps: the oracle the one validator is held to.
const SPEC: Record<string, (v: unknown) => boolean> = {
  event: (v) => v === 'payment.paid',
  paymentId: (v) => typeof v === 'string' && /^p_[\s\S]{1,254}$/.test(v),
  orderNo: (v) => typeof v === 'string' && v.length >= 1 && v.length <= 256,
  txId: (v) => typeof v === 'string' && v.length >= 1 && v.length <= 256,
  tokenSymbol: (v) => typeof v === 'string' && v.length >= 1 && v.length <= 256,
  paymentNetwork: (v) => typeof v === 'string' && v.length >= 1 && v.length <= 256,
  amount: (v) => typeof v === 'string' && /^\d{1,78}(?:\.\d{1,78})?$/.test(v),
  amountRaw: (v) => typeof v === 'string' && /^\d{1,78}$/.test(v),
  blockNum: (v) => v === null || (typeof v === 'string' && /^\d{1,78}$/.test(v)),
  confirmations: (v) => v === null || (Number.isSafeInteger(v) && (v as number) >= 0),
  paidAt: (v) =>
    typeof v === 'string' &&
    /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/.test(v) &&
    !Number.isNaN(Date.parse(v)) &&
    new Date(v).toISOString() === v,
};

const near = <T>(valid: T[], other: fc.Arbitrary<unknown>) => fc.oneof(fc.constantFrom(...valid), other);
const text = fc.oneof(fc.string({ maxLength: 300 }), fc.constant(''), fc.constant(null), fc.integer());
const digits = fc.oneof(
  fc.stringMatching(/^\d{1,80}$/),
  fc.stringMatching(/^-?\d*\.?\d*$/),
  fc.integer(),
  fc.constant(null),
);
const payload = fc.record({
  event: near(['payment.paid'], fc.constantFrom('payment.failed', '', null)),
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
      fc.date({ noInvalidDate: true, min: new Date(0), max: new Date('9999-12-31') }).map((d) => d.toISOString()),
      fc.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      fc.string(),
    ),
  ),
});

function verdict(body: Record<string, unknown>): string[] | 'valid' {
  try {
    assertPaymentPaidEvent(body);
    return 'valid';
  } catch (error) {
    expect(error).toBeInstanceOf(WebhookError);
    expect((error as WebhookError).code).toBe('INVALID_PAYLOAD');
    return Object.keys(SPEC).filter((field) => (error as Error).message.includes(`${field} `));
  }
}

describe('payment.paid validation: one validator, held to spec 2.3', () => {
  it('a sample event is valid, and unknown extra fields are kept', () => {
    const event = { ...samplePaymentPaidEvent(), futureField: 'x' } as Record<string, unknown>;
    expect(verdict(event)).toBe('valid');
    expect(event.futureField).toBe('x');
  });

  it('accepts exactly the payloads the spec accepts, and names every field at fault', () => {
    fc.assert(
      fc.property(payload, (body) => {
        const wrong = Object.keys(SPEC).filter((field) => !SPEC[field]?.((body as Record<string, unknown>)[field]));
        const seen = verdict(body);
        if (wrong.length === 0) expect(seen).toBe('valid');
        else expect(seen).toEqual(wrong);
      }),
      { numRuns: 3000 },
    );
  });
});
