import { describe, expect, it } from 'vitest';
import { attemptLine, deliveryTable, receiverError, result } from '../src/cli/format.js';
import type { DeliveryAttempt, DeliveryRecord } from '../src/core/delivery-log.js';

// What `trigger`, `listen` and `deliveries` print for one attempt: they share these helpers.

const attempt = (over: Partial<DeliveryAttempt>): DeliveryAttempt => ({
  attempt: 1,
  startedAt: '2026-11-25T00:00:00.000Z',
  latencyMs: 3,
  status: 401,
  error: 'HTTP 401',
  outcome: 'http-error',
  responseBody: '',
  signatureTimestamp: 1_790_000_000,
  nextRetryInMs: null,
  ...over,
});

describe('an attempt as the CLI prints it', () => {
  it("names the receiver's error code and message next to the status", () => {
    const body = JSON.stringify({
      error: 'SIGNATURE_MISMATCH',
      message: 'No signature in X-Service-Signature matches.',
    });
    expect(result(attempt({ responseBody: body }))).toBe(
      'HTTP 401 SIGNATURE_MISMATCH: No signature in X-Service-Signature matches.',
    );
    const nested = JSON.stringify({ error: { code: 'invalid_signature', message: 'bad' } });
    expect(result(attempt({ status: 400, responseBody: nested }))).toBe('HTTP 400 invalid_signature: bad');
    expect(result(attempt({ status: 503, responseBody: '{"error":"STORE_UNAVAILABLE"}' }))).toBe(
      'HTTP 503 STORE_UNAVAILABLE',
    );
  });

  it('shows the start of any other answer, on one line, without control characters', () => {
    expect(result(attempt({ status: 500, responseBody: 'Internal\n  Server Error' }))).toBe(
      'HTTP 500 Internal Server Error',
    );
    expect(result(attempt({ status: 502, responseBody: '' }))).toBe('HTTP 502');
    // A receiver cannot move the cursor or recolour the terminal through its answer.
    expect(result(attempt({ status: 500, responseBody: 'oops\u001b[2J\u001b]0;title\u0007 x' }))).toBe(
      'HTTP 500 oops[2J]0;title x',
    );
    expect(result(attempt({ status: 500, responseBody: `{"error":"BAD\u001b[31m"}` }))).toBe(
      'HTTP 500 {"error":"BAD[31m"}',
    );
    expect(result(attempt({ status: 500, responseBody: 'x'.repeat(200) }))).toBe(`HTTP 500 ${'x'.repeat(80)}...`);
  });

  it('keeps what the sender saw for answers it never got, and 2xx bodies as they were', () => {
    expect(result(attempt({ status: null, outcome: 'timeout', error: 'timeout: no answer in 5000 ms' }))).toBe(
      'timeout: no answer in 5000 ms',
    );
    expect(result(attempt({ status: 200, outcome: 'succeeded', error: null, responseBody: '{"received":true}' }))).toBe(
      '200 {"received":true}',
    );
  });

  it('is the same in the attempt line (listen, simulate) and the deliveries table', () => {
    const last = attempt({ responseBody: '{"error":"TIMESTAMP_OUT_OF_TOLERANCE","message":"late"}' });
    const delivery = {
      deliveryId: 'dl_1',
      paymentId: 'p_1',
      kind: 'original',
      state: 'failed',
      createdAt: '2026-11-25T00:00:00.000Z',
      attempts: [last],
    } as unknown as DeliveryRecord;
    expect(attemptLine({ delivery, attempt: last })).toContain('attempt 1: HTTP 401 TIMESTAMP_OUT_OF_TOLERANCE: late');
    expect(deliveryTable([delivery])).toMatch(/failed\s+1\s+HTTP 401 TIMESTAMP_OUT_OF_TOLERANCE: late$/);
  });

  it('reads no code from answers that only look like one', () => {
    for (const body of ['[]', 'null', '"x"', '{"error":42}', '{"error":"has space"}', `{"error":"${'A'.repeat(65)}"}`])
      expect(receiverError(body)).toBeNull();
  });
});
