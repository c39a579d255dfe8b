import { describe, expect, it } from 'vitest';
import { milliseconds } from '../src/index.js';

// Prisma runs its transaction and pool waits on timers: a transactionTimeoutMs past what a timer holds
// ended every delivery's transaction at once.

describe('a store option that becomes a timer', () => {
  it('is refused past 2,147,483,647 ms with a RangeError naming the store and the option', () => {
    for (const value of [2 ** 31, 30 * 24 * 60 * 60 * 1000, Number.POSITIVE_INFINITY]) {
      expect(() => milliseconds(value, 60_000, 'PrismaStore', 'transactionTimeoutMs')).toThrow(
        new RangeError(
          `PrismaStore: transactionTimeoutMs must be a number of milliseconds above 0 and at most 2147483647 (about 24.8 days, the longest a timer holds: a longer one fires at once), got ${value}.`,
        ),
      );
    }
    expect(() => milliseconds(0, 1, 'PrismaStore', 'maxWaitMs')).toThrow(RangeError);
  });

  it('up to the maximum, or the fallback when not given', () => {
    expect(milliseconds(2_147_483_647, 1, 'PrismaStore', 'maxWaitMs')).toBe(2_147_483_647);
    expect(milliseconds(undefined, 5_000, 'PrismaStore', 'maxWaitMs')).toBe(5_000);
  });
});
