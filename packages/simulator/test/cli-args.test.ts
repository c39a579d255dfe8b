import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isPlainNumber, numberFlag, withoutTrailingSlashes } from '../src/cli/args.js';

/** Process CPU per call of `run(n)`, the least of several batches (a busy machine inflates some, not all). */
function cpuPerCall(run: () => void, calls: number, rounds = 5): number {
  let least = Number.POSITIVE_INFINITY;
  for (let round = 0; round < rounds; round++) {
    const start = process.cpuUsage();
    for (let i = 0; i < calls; i++) run();
    const used = process.cpuUsage(start);
    least = Math.min(least, (used.user + used.system) / calls);
  }
  return least;
}

const refused = (value: string) => () => {
  try {
    numberFlag(value, 'retry-factor');
  } catch {
    // a UsageError, as expected: its cost is part of what is measured
  }
};

describe('the CLI reads its arguments in linear time', () => {
  it('isPlainNumber says what /^-?(?:\\d+\\.?\\d*|\\.\\d+)$/ said', () => {
    const shaped = fc.string({ unit: fc.constantFrom('-', '.', '0', '7', '9', 'e', ' ', '+', 'x'), maxLength: 12 });
    fc.assert(
      fc.property(fc.oneof(shaped, fc.string({ maxLength: 12 })), (v) => {
        expect(isPlainNumber(v)).toBe(/^-?(?:\d+\.?\d*|\.\d+)$/.test(v));
      }),
      { numRuns: 5000 },
    );
  });

  it("withoutTrailingSlashes says what .replace(/\\/+$/, '') said", () => {
    const shaped = fc.string({ unit: fc.constantFrom('/', 'a', ':', '.'), maxLength: 12 });
    fc.assert(
      fc.property(fc.oneof(shaped, fc.string({ maxLength: 12 })), (v) => {
        expect(withoutTrailingSlashes(v)).toBe(v.replace(/\/+$/, ''));
      }),
      { numRuns: 5000 },
    );
  });

  // Before: 1.09 s for a 20,000-character argument, 100x the cost of 2,000 characters (quadratic).
  it('regression: a 20,000-digit --retry-factor costs about 10x a 2,000-digit one, not 100x', () => {
    const short = cpuPerCall(refused(`${'1'.repeat(2_000)}x`), 1_000);
    const long = cpuPerCall(refused(`${'1'.repeat(20_000)}x`), 100);
    expect(long / short).toBeLessThan(30);
  }, 60_000);

  it('regression: a URL of 20,000 slashes costs about what one of 2,000 does', () => {
    const url = (n: number) => {
      const text = `http://a${'/'.repeat(n)}x`;
      return () => withoutTrailingSlashes(text);
    };
    const short = cpuPerCall(url(2_000), 10_000);
    const long = cpuPerCall(url(20_000), 1_000);
    expect(long / short).toBeLessThan(30);
  }, 60_000);
});
