import { STATUS_BY_CODE, type WebhookErrorCode } from '@service-pay/core';
import { describe, expect, it } from 'vitest';
import { adviceFor } from '../src/cli/receiver-advice.js';
import type { DeliveryAttempt } from '../src/core/delivery-log.js';

// Every answer trigger and resend meet gets a fix line, and the decision to stop at once (a retry would get
// the same answer) or to follow the retries. Driven by core's own table of codes: a code added there
// without advice here fails this test.

const TARGET = 'http://127.0.0.1:3000/webhooks/service';

const attempt = (over: Partial<DeliveryAttempt>): DeliveryAttempt => ({
  attempt: 1,
  startedAt: '2026-11-25T00:00:00.000Z',
  latencyMs: 3,
  status: 500,
  error: 'HTTP 500',
  outcome: 'http-error',
  responseBody: '',
  signatureTimestamp: 1_790_000_000,
  nextRetryInMs: 1000,
  ...over,
});

/** Codes a retry cannot get past: the app's set-up, code or data must change first. */
const STOP: WebhookErrorCode[] = [
  'METHOD_NOT_ALLOWED',
  'UNSUPPORTED_MEDIA_TYPE',
  'BODY_TOO_LARGE',
  'RAW_BODY_UNAVAILABLE',
  'MISSING_SIGNATURE',
  'MALFORMED_SIGNATURE',
  'SIGNATURE_MISMATCH',
  'TIMESTAMP_OUT_OF_TOLERANCE',
  'INVALID_PAYLOAD',
  'EVENT_MISMATCH',
  'MISSING_DELIVERY_ID',
  'PAYLOAD_CONFLICT',
  'INVALID_OPTIONS',
  'WRITE_OUTSIDE_TRANSACTION',
  'QUERY_NOT_AWAITED',
];
/** Never an answer a sender reads: a 2xx, a client gone, the reconciler's own. */
const NOT_ANSWERS: WebhookErrorCode[] = ['UNSUPPORTED_EVENT', 'CLIENT_DISCONNECTED', 'PAYMENT_READ_FAILED'];

describe('adviceFor: a fix line for every receiver error', () => {
  const codes = (Object.keys(STATUS_BY_CODE) as WebhookErrorCode[]).filter((c) => !NOT_ANSWERS.includes(c));

  it.each(codes)('%s: its own fix, naming the code, and whether to stop', (code) => {
    const message = `message of ${code}, with its fix at the end.`;
    const advice = adviceFor(
      attempt({ status: STATUS_BY_CODE[code], responseBody: JSON.stringify({ error: code, message }) }),
      TARGET,
    );
    expect(advice).not.toBeNull();
    expect(advice?.setup).toBe(STOP.includes(code));
    // Its own advice, not the fallback that only repeats the receiver's words.
    expect(advice?.fix).not.toMatch(/; its log says why/);
    if (code === 'RAW_BODY_UNAVAILABLE' || code === 'INVALID_OPTIONS') expect(advice?.fix).toContain(message);
  });

  it('answers without a code: by status, and the receiver words for the rest', () => {
    const fix = (over: Partial<DeliveryAttempt>) => adviceFor(attempt(over), TARGET);
    expect(fix({ status: 404, responseBody: '<!DOCTYPE html><html>' })).toEqual({
      fix: `no route at this path (the app answered with an HTML 404 page): check the path of the app's webhook route against ${TARGET}`,
      setup: true,
    });
    expect(fix({ status: 401, responseBody: 'Unauthorized' })?.setup).toBe(true);
    expect(fix({ status: 302 })?.fix).toMatch(/point --forward-to at the final URL/);
    expect(fix({ status: 502, responseBody: '{"error":"BAD_GATEWAY","message":"upstream"}' })).toEqual({
      fix: 'the app answered 502 (BAD_GATEWAY: upstream); its log says why. The sender retries',
      setup: false,
    });
    expect(fix({ status: null, outcome: 'network-error', error: 'ECONNREFUSED' })?.setup).toBe(true);
    expect(fix({ status: null, outcome: 'timeout', error: 'timeout' })?.setup).toBe(false);
    expect(fix({ status: 200, outcome: 'succeeded', error: null })).toBeNull();
  });
});
