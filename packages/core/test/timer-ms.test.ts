import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import {
  createFetchHandler,
  createReconciler,
  createWebhookHandler,
  MAX_TIMER_MS,
  MemoryDedupeStore,
  signWebhook,
  timerMs,
  WebhookError,
} from '../src/index.js';
import { readNodeBody } from '../src/node/index.js';
import { samplePaymentPaidEvent } from '../src/testing/index.js';

// A delay past 2^31-1 ms does not wait: Node's timer fires it after 1 ms. A bodyTimeoutMs of 2^31 answered
// every delivery whose body took more than a tick 408 BODY_TIMEOUT, never credited.

const SECRET = 'whsec_timer_ms_tests';
const onPaymentPaid = () => {};
const DAY_MS = 24 * 60 * 60 * 1000;
const PAST_TIMER = [2 ** 31, 30 * DAY_MS, 1e12, Number.POSITIVE_INFINITY];

function refusal(make: () => unknown): WebhookError {
  try {
    make();
  } catch (error) {
    expect(error).toBeInstanceOf(WebhookError);
    return error as WebhookError;
  }
  throw new Error('expected a refusal');
}

describe('timerMs, the one check of a millisecond option that becomes a timer', () => {
  it('holds up to 2,147,483,647 and refuses one more, naming the option and the maximum', () => {
    expect(MAX_TIMER_MS).toBe(2_147_483_647);
    expect(timerMs(MAX_TIMER_MS, 1, 'options.x')).toBe(MAX_TIMER_MS);
    expect(timerMs(undefined, 1_000, 'options.x')).toBe(1_000);
    const error = refusal(() => timerMs(MAX_TIMER_MS + 1, 1, 'options.x'));
    expect(error.code).toBe('INVALID_OPTIONS');
    expect(error.message).toBe(
      'options.x must be a number of milliseconds above 0 and at most 2147483647 (about 24.8 days, the longest a timer holds: a longer one fires at once), got 2147483648.',
    );
  });

  it('refuses what is not a delay at all: 0 (unless allowed), negatives, NaN, strings, null', () => {
    for (const value of [0, -1, Number.NaN, '10', null, Number.NEGATIVE_INFINITY]) {
      expect(refusal(() => timerMs(value, 1, 'options.x')).code).toBe('INVALID_OPTIONS');
    }
    expect(timerMs(0, 1, 'options.x', { zero: true })).toBe(0);
    expect(refusal(() => timerMs(-1, 1, 'options.x', { zero: true })).message).toMatch(/from 0 and at most/);
  });

  it('holds Infinity at the maximum only where "no limit" is what the option can mean', () => {
    expect(timerMs(Number.POSITIVE_INFINITY, 1, 'options.x', { forever: true })).toBe(MAX_TIMER_MS);
    expect(() => timerMs(2 ** 31, 1, 'options.x', { forever: true })).toThrow(/Infinity for no limit/);
    expect(() => timerMs(Number.POSITIVE_INFINITY, 1, 'options.x')).toThrow(WebhookError);
  });

  it("throws the caller's own error class when asked to (stores keep theirs)", () => {
    const error = (() => {
      try {
        timerMs(2 ** 31, 1, 'timeoutMs', { error: (m) => new RangeError(`Store: ${m}`) });
      } catch (e) {
        return e as Error;
      }
    })();
    expect(error).toBeInstanceOf(RangeError);
    expect(error?.message).toMatch(/^Store: timeoutMs must be a number of milliseconds/);
  });
});

describe('millisecond options past the timer maximum', () => {
  it('bodyTimeoutMs: 2 ** 31, 30 days, 1e12 or Infinity is refused at construction, by every entry', () => {
    for (const bodyTimeoutMs of PAST_TIMER) {
      for (const make of [createWebhookHandler, createFetchHandler]) {
        const error = refusal(() => make({ secret: SECRET, onPaymentPaid, bodyTimeoutMs }));
        expect([error.code, error.message]).toEqual([
          'INVALID_OPTIONS',
          expect.stringMatching(/^options\.bodyTimeoutMs must be .* at most 2147483647 /),
        ]);
      }
    }
    expect(() => createWebhookHandler({ secret: SECRET, onPaymentPaid, bodyTimeoutMs: MAX_TIMER_MS })).not.toThrow();
  });

  it('storeTimeoutMs past the maximum is refused by the handler and the reconciler', () => {
    for (const storeTimeoutMs of PAST_TIMER) {
      expect(refusal(() => createWebhookHandler({ secret: SECRET, onPaymentPaid, storeTimeoutMs })).message).toMatch(
        /^options\.storeTimeoutMs must be /,
      );
      const reconcile = () =>
        createReconciler({
          getPayment: async () => undefined as never,
          store: new MemoryDedupeStore(),
          onPaymentPaid,
          storeTimeoutMs,
        });
      expect(refusal(reconcile).message).toMatch(/^options\.storeTimeoutMs must be /);
    }
  });

  it('leaseMs, retainMs and handlerTimeoutMs never reach a timer: 30 days is accepted and a delivery is credited', async () => {
    const credited: string[] = [];
    const handle = createFetchHandler({
      secret: SECRET,
      leaseMs: 30 * DAY_MS,
      retainMs: 30 * DAY_MS,
      handlerTimeoutMs: 2 ** 31,
      onPaymentPaid: async (event) => {
        // An awaited handler is watched by the deadline ticker, whose period stays at most 250 ms.
        await new Promise((resolve) => setImmediate(resolve));
        credited.push(event.paymentId);
      },
    });
    const event = samplePaymentPaidEvent();
    const { body, headers } = signWebhook({ event, secret: SECRET });
    const response = await handle(new Request('http://localhost/webhooks', { method: 'POST', headers, body }));
    expect(response.status).toBe(200);
    expect(credited).toEqual([event.paymentId]);
  });

  it('readNodeBody refuses a timeoutMs past the maximum instead of answering BODY_TIMEOUT a tick later', async () => {
    const stalled = Object.assign(new PassThrough(), { method: 'POST', headers: {} });
    stalled.write('{"a":'); // the first bytes, then nothing
    const error = await readNodeBody(stalled, 1024, { timeoutMs: 2 ** 31 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WebhookError);
    expect([(error as WebhookError).code, (error as WebhookError).message]).toEqual([
      'INVALID_OPTIONS',
      expect.stringMatching(/^timeoutMs must be .* at most 2147483647/),
    ]);
  });
});
