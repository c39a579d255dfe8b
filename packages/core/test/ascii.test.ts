import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { digitsValue, isDecimal, isDigits, isHex } from '../src/util/ascii.js';

// Strings made mostly of the characters that matter at the edges of each class.
const edgy = fc.stringMatching(/^[0-9.\x20-\x22\x7d-\x7f\-+e/:]{0,90}$/);
const any = fc.oneof(edgy, fc.string({ maxLength: 90 }), fc.stringMatching(/^\d{1,90}(?:\.\d{0,90})?$/));

describe('ascii checks equal the RegExps they stand for', () => {
  it('isDigits(v, n) is /^\\d{1,n}$/', () => {
    fc.assert(
      fc.property(any, fc.integer({ min: 1, max: 80 }), (v, n) => {
        expect(isDigits(v, n)).toBe(new RegExp(`^\\d{1,${n}}$`).test(v));
      }),
      { numRuns: 5000 },
    );
  });

  it('digitsValue(v, n) is Number(v) where /^\\d{1,n}$/ matches, else -1', () => {
    fc.assert(
      fc.property(any, fc.integer({ min: 1, max: 15 }), (v, n) => {
        expect(digitsValue(v, n)).toBe(new RegExp(`^\\d{1,${n}}$`).test(v) ? Number(v) : -1);
      }),
      { numRuns: 5000 },
    );
    expect(digitsValue('999999999999999', 15)).toBe(999_999_999_999_999);
    expect(digitsValue('0001764500000', 13)).toBe(1_764_500_000);
  });

  it('isDecimal(v, n) is /^\\d{1,n}(?:\\.\\d{1,n})?$/', () => {
    fc.assert(
      fc.property(any, fc.integer({ min: 1, max: 80 }), (v, n) => {
        expect(isDecimal(v, n)).toBe(new RegExp(`^\\d{1,${n}}(?:\\.\\d{1,${n}})?$`).test(v));
      }),
      { numRuns: 5000 },
    );
    for (const v of ['0', '12.5', '.5', '5.', '1.2.3', '', '٣', '1e5', '-1']) {
      expect(isDecimal(v, 78)).toBe(/^\d{1,78}(?:\.\d{1,78})?$/.test(v));
    }
  });

  it('isHex(v, n) is /^[0-9a-fA-F]{n}$/', () => {
    // Hex digits and their neighbours in the ASCII table, control characters included.
    const neighbours = [...'0123456789abcdefABCDEFgG/:@`', '\u0000', '\u0010', '\u007f', ' '];
    const hexish = fc.array(fc.constantFrom(...neighbours), { maxLength: 12 }).map((cs) => cs.join(''));
    fc.assert(
      fc.property(fc.oneof(hexish, any), fc.integer({ min: 0, max: 12 }), (v, n) => {
        expect(isHex(v, n)).toBe(new RegExp(`^[0-9a-fA-F]{${n}}$`).test(v));
      }),
      { numRuns: 5000 },
    );
  });
});
