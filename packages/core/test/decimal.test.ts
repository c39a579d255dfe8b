import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareAmounts, InvalidAmountError, toRawAmount } from '../src/index.js';

describe('compareAmounts', () => {
  it.each([
    ['10.50', '10.5', 0],
    ['010.5', '10.50', 0],
    ['0', '0.000', 0],
    ['0.1', '0.10000000000000000001', -1],
    ['9', '10', -1],
    ['100', '99.999999', 1],
    ['12345678901234567890.123456789012345678', '12345678901234567890.123456789012345679', -1],
  ])('%s vs %s -> %i', (a, b, expected) => {
    expect(compareAmounts(a, b)).toBe(expected);
    expect(compareAmounts(b, a)).toBe(-expected || 0);
  });

  it('does what floating point cannot: 0.1 + 0.2 style amounts compare exactly', () => {
    expect(compareAmounts('0.30000000000000004', '0.3')).toBe(1);
  });

  it.each(['1e3', '-1', '+1', '.5', '5.', '', ' 1', '1,000', 'NaN', '0x10'])('refuses %j with a coded error', (bad) => {
    expect(() => compareAmounts(bad, '1')).toThrow(InvalidAmountError);
    expect(() => compareAmounts('1', bad)).toThrowError(expect.objectContaining({ code: 'INVALID_AMOUNT' }));
  });

  it('refuses a number', () => {
    expect(() => compareAmounts(12.5 as unknown as string, '12.5')).toThrow(InvalidAmountError);
  });

  it('agrees with BigInt arithmetic on random amounts', () => {
    const amount = fc.tuple(fc.bigInt({ min: 0n, max: 10n ** 30n }), fc.integer({ min: 0, max: 18 }));
    fc.assert(
      fc.property(amount, amount, ([ai, ad], [bi, bd]) => {
        const toText = (v: bigint, d: number) => {
          const s = v.toString().padStart(d + 1, '0');
          return d === 0 ? s : `${s.slice(0, -d)}.${s.slice(-d)}`;
        };
        const scale = 10n ** BigInt(36);
        const aScaled = (ai * scale) / 10n ** BigInt(ad);
        const bScaled = (bi * scale) / 10n ** BigInt(bd);
        const expected = aScaled === bScaled ? 0 : aScaled < bScaled ? -1 : 1;
        expect(compareAmounts(toText(ai, ad), toText(bi, bd))).toBe(expected);
      }),
    );
  });
});

describe('toRawAmount', () => {
  it.each([
    ['1.5', 6, '1500000'],
    ['12.50', 6, '12500000'],
    ['0.000001', 6, '1'],
    ['0', 18, '0'],
    ['7', 0, '7'],
    ['0012.5', 2, '1250'],
  ])('%s with %i decimals -> %s', (amount, decimals, raw) => {
    expect(toRawAmount(amount, decimals)).toBe(raw);
  });

  it('refuses more fraction digits than the token has, and bad decimals', () => {
    expect(() => toRawAmount('1.0000001', 6)).toThrow(/more than 6 fraction digits/);
    expect(() => toRawAmount('1', -1)).toThrow(InvalidAmountError);
    expect(() => toRawAmount('1', 1.5)).toThrow(InvalidAmountError);
  });
});

describe('digit cap (a uint256 has 78 digits; no token has more than 78 decimals)', () => {
  it('refuses longer input at once, whatever it holds', () => {
    // Before: 60,000 digits were accepted and took 2.6 s (quadratic zero stripping).
    for (const huge of [`1${'0'.repeat(59_999)}`, `0.${'0'.repeat(60_000)}1`, '9'.repeat(200)]) {
      expect(() => compareAmounts(huge, '1')).toThrow(/more digits than a token amount can have/);
      expect(() => toRawAmount(huge, 18)).toThrow(InvalidAmountError);
    }
    expect(() => compareAmounts('1', `1.${'0'.repeat(79)}`)).toThrow(/at most 78 before and after the point/);
    expect(() => compareAmounts('9'.repeat(79), '1')).toThrow(/at most 78/);
  });

  it('takes 78 digits on each side, zeros included', () => {
    const max = '9'.repeat(78);
    expect(compareAmounts(max, `${max}.${'0'.repeat(78)}`)).toBe(0);
    expect(compareAmounts(`${'0'.repeat(77)}1`, '1')).toBe(0);
    expect(compareAmounts(`0.${'0'.repeat(77)}1`, '0')).toBe(1);
    expect(toRawAmount(`0.${'0'.repeat(77)}1`, 78)).toBe('1');
    expect(toRawAmount(`${'0'.repeat(78)}.${'0'.repeat(78)}`, 78)).toBe('0');
  });
});
