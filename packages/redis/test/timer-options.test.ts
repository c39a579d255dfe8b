import { describe, expect, it } from 'vitest';
import { failFastClusterOptions, failFastRedisOptions } from '../src/index.js';

// failFast's timeoutMs scales the client's socket timers (5x, 2x): a bound past what a timer holds made
// ioredis's socket timeout fire at once, so every connection was declared dead as soon as it was idle.

describe('failFast options against what a timer holds', () => {
  it('a timeoutMs past 2,147,483,647 is refused with a RangeError naming it', () => {
    for (const timeoutMs of [2 ** 31, 30 * 24 * 60 * 60 * 1000, Number.POSITIVE_INFINITY, 0, -1, Number.NaN]) {
      expect(() => failFastRedisOptions({ timeoutMs })).toThrow(RangeError);
      expect(() => failFastClusterOptions({ timeoutMs })).toThrow(
        /^failFast options: timeoutMs must be a number of milliseconds above 0 and at most 2147483647/,
      );
    }
  });

  it('the timers made from a large timeoutMs are held at the maximum', () => {
    const options = failFastRedisOptions({ timeoutMs: 1_000_000_000 });
    expect([options.socketTimeout, options.connectTimeout]).toEqual([2_147_483_647, 2_000_000_000]);
    expect(failFastRedisOptions()).toMatchObject({ socketTimeout: 5_000, connectTimeout: 2_000 });
  });
});
