import { createServiceClient } from '@service-pay/client';
import { MAX_TIMER_MS } from '@service-pay/core';
import { describe, expect, it } from 'vitest';
import { SimulatorError } from '../src/core/errors.js';
import { resolveOptions } from '../src/core/options.js';
import { startSimulator } from '../src/index.js';

// Each retry bound held alone (baseDelayMs up to 1 h, factor up to 10, 8 attempts), but the wait before
// the last attempt is baseDelayMs * factor^6: up to 3.6e12 ms, which a timer fires after 1 ms, so every
// retry of such a schedule came at once.

const merchant = { name: 'm', apiKey: 'ak_bound', apiSecret: 'sk_bound', webhookSecret: 'whsec_bound' };

function refusal(retry: Record<string, number>): SimulatorError {
  try {
    resolveOptions({ merchants: [merchant], retry });
  } catch (error) {
    expect(error).toBeInstanceOf(SimulatorError);
    return error as SimulatorError;
  }
  throw new Error('expected a refusal');
}

describe('the simulator retry schedule against what a timer holds', () => {
  it('refuses a schedule whose last wait is past 2,147,483,647 ms, naming the options', () => {
    const error = refusal({ baseDelayMs: 3_600_000, factor: 10 });
    expect(error.code).toBe('INVALID_OPTIONS');
    expect(error.message).toMatch(
      /^retry\.baseDelayMs \* retry\.factor \*\* \(retry\.maxAttempts - 2\), the wait before the last attempt, must be .* at most 2147483647 .*got 3600000000000\.$/,
    );
  });

  it('accepts the same bounds with fewer attempts, and the defaults', () => {
    // 3.6e6 * 10^2 = 3.6e8: four attempts, the last wait about 4 days.
    expect(
      resolveOptions({ merchants: [merchant], retry: { baseDelayMs: 3_600_000, factor: 10, maxAttempts: 4 } }).retry,
    ).toMatchObject({ maxAttempts: 4 });
    expect(resolveOptions({ merchants: [merchant] }).retry).toMatchObject({ baseDelayMs: 1000, factor: 2 });
  });
});

describe('waitForIdle against what a timer holds', () => {
  it('refuses a timeoutMs past 2,147,483,647 (it would time out at once); Infinity waits as long as it takes', async () => {
    const sim = await startSimulator({ merchants: [merchant], port: 0 });
    try {
      const error = await sim.waitForIdle({ timeoutMs: 2 ** 31 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SimulatorError);
      expect([(error as SimulatorError).code, (error as Error).message]).toEqual([
        'INVALID_OPTIONS',
        expect.stringMatching(
          /^timeoutMs must be a number of milliseconds from 0 and at most 2147483647 .*Infinity for no limit/,
        ),
      ]);
      await expect(sim.waitForIdle({ timeoutMs: Number.POSITIVE_INFINITY })).resolves.toBeUndefined();
    } finally {
      await sim.stop();
    }
  });
});

describe('one maximum across the packages', () => {
  // The client depends on nothing, so it states the bound itself; this package uses both.
  it("the client's bound is core's MAX_TIMER_MS", () => {
    const base = { baseUrl: 'http://127.0.0.1:9', apiKey: 'ak_bound', apiSecret: 'sk_bound' };
    expect(() => createServiceClient({ ...base, timeoutMs: MAX_TIMER_MS })).not.toThrow();
    expect(() => createServiceClient({ ...base, timeoutMs: MAX_TIMER_MS + 1 })).toThrow(/at most 2147483647/);
  });
});
