import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type AttemptFailure,
  backoffDelayMs,
  decideRetry,
  isRetryable,
  parseRetryAfter,
  provablyNotSent,
  RETRY_DEFAULTS,
  resolveRetry,
} from '../src/retry-policy.js';

const http = (status: number, retryAfterMs?: number): AttemptFailure => ({
  kind: 'http',
  status,
  code: 'X',
  message: 'x',
  retryAfterMs,
});
const fetchFailed = (code: string) =>
  new TypeError('fetch failed', { cause: Object.assign(new Error(code), { code }) });

describe('backoffDelayMs', () => {
  it('stays within [0, min(maxDelayMs, baseDelayMs * 2^(n-1))] for any draw, even one outside [0, 1)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 60 }),
        fc.integer({ min: 0, max: 10_000 }),
        fc.integer({ min: 0, max: 100_000 }),
        fc.double(),
        (retry, baseDelayMs, maxDelayMs, draw) => {
          const delay = backoffDelayMs(retry, { baseDelayMs, maxDelayMs }, () => draw);
          const ceiling = Math.min(maxDelayMs, baseDelayMs * 2 ** (retry - 1));
          return Number.isInteger(delay) && delay >= 0 && delay <= ceiling;
        },
      ),
    );
  });

  it('doubles the ceiling until maxDelayMs', () => {
    const top = () => 1;
    expect([1, 2, 3, 4, 5, 6].map((n) => backoffDelayMs(n, RETRY_DEFAULTS, top))).toEqual([
      500, 1000, 2000, 4000, 8000, 8000,
    ]);
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2030-01-01T00:00:00Z');
  it.each([
    ['0', 0],
    ['7', 7000],
    [' 120 ', 120_000],
    ['Tue, 01 Jan 2030 00:00:05 GMT', 5000],
    ['Mon, 31 Dec 2029 23:59:00 GMT', 0], // in the past
  ])('reads %j as %i ms', (value, ms) => {
    expect(parseRetryAfter(value, now)).toBe(ms);
  });

  it.each([null, undefined, '', '-5', '1.5', 'soon', '1e3', 'Tue, 99 Foo 2030 GMT'])('ignores %j', (value) => {
    expect(parseRetryAfter(value, now)).toBeUndefined();
  });
});

describe('provablyNotSent', () => {
  it.each(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'UND_ERR_CONNECT_TIMEOUT'])('%s: yes', (code) => {
    expect(provablyNotSent(fetchFailed(code))).toBe(true);
  });

  it.each(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_HEADERS_TIMEOUT'])(
    '%s: no, it may have arrived',
    (code) => {
      expect(provablyNotSent(fetchFailed(code))).toBe(false);
    },
  );

  it('needs every address of an AggregateError to have refused', () => {
    const refused = Object.assign(new Error('a'), { code: 'ECONNREFUSED' });
    const reset = Object.assign(new Error('b'), { code: 'ECONNRESET' });
    expect(provablyNotSent(new TypeError('fetch failed', { cause: new AggregateError([refused, refused]) }))).toBe(
      true,
    );
    expect(provablyNotSent(new TypeError('fetch failed', { cause: new AggregateError([refused, reset]) }))).toBe(false);
  });

  it('no for an error it cannot read', () => {
    expect(provablyNotSent(new Error('boom'))).toBe(false);
    expect(provablyNotSent('boom')).toBe(false);
  });
});

describe('isRetryable', () => {
  it.each<[string, AttemptFailure, boolean, boolean]>([
    ['429', http(429), true, true],
    ['503 + Retry-After', http(503, 1000), true, true],
    ['bare 503', http(503), true, false],
    ['500', http(500), true, false],
    ['504', http(504), true, false],
    ['501', http(501), false, false],
    ['400', http(400), false, false],
    ['408', http(408), false, false],
    ['2xx not a payment', http(200), false, false],
    ['refused', { kind: 'network', cause: null, notSent: true }, true, true],
    ['reset', { kind: 'network', cause: null, notSent: false }, true, false],
    ['timeout', { kind: 'timeout', limitMs: 10 }, true, false],
    ['aborted', { kind: 'aborted', reason: null }, false, false],
  ])('%s: GET %s, POST %s', (_, failure, get, post) => {
    expect([isRetryable('GET', failure), isRetryable('POST', failure)]).toEqual([get, post]);
  });
});

describe('decideRetry', () => {
  const policy = resolveRetry({ random: () => 0.5 })!;
  it('waits the backoff, then stops at maxAttempts', () => {
    expect(decideRetry(policy, { method: 'GET', failure: http(503), attempt: 1, remainingMs: 30_000 })).toEqual({
      retryInMs: 250,
    });
    expect(decideRetry(policy, { method: 'GET', failure: http(503), attempt: 3, remainingMs: 30_000 })).toEqual({
      stop: 'maxAttempts (3) reached',
    });
  });

  it('says nothing more about a plain refusal, and warns after an ambiguous POST', () => {
    expect(decideRetry(policy, { method: 'POST', failure: http(422), attempt: 1, remainingMs: 1 })).toEqual({
      stop: undefined,
    });
    expect(decideRetry(policy, { method: 'POST', failure: http(500), attempt: 1, remainingMs: 1 })).toEqual({
      stop: expect.stringContaining('may have created the payment'),
    });
  });

  it('is off with retry: false', () => {
    expect(resolveRetry(false)).toBeUndefined();
    expect(decideRetry(undefined, { method: 'GET', failure: http(503), attempt: 1, remainingMs: 1e9 })).toEqual({
      stop: undefined,
    });
  });
});
