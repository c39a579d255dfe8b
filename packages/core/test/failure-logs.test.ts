import { afterEach, describe, expect, it, vi } from 'vitest';
import { createWebhookHandler, type PaymentPaidEvent, signWebhook } from '../src/index.js';
import { FailingPayments } from '../src/observe/failing-payments.js';
import { samplePaymentPaidEvent } from '../src/testing/index.js';
import { recordingLogger } from './support/recording-logger.js';

// A handler that fails on every retry of a payment: its stack once, then one short line per retry,
// rate-limited like the refusals. An operator reads one block per broken payment, not one per attempt.

const SECRET = 'whsec_failure_logs_test';

function delivery(event: PaymentPaidEvent) {
  const { body, headers } = signWebhook({ event, secret: SECRET });
  return { method: 'POST', rawBody: body, headers };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('a failing handler is logged once per payment with its stack, its retries one short line each', () => {
  it('first failure: the error with its stack; the next: a short line; later ones in the window: counted', async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    const logger = recordingLogger();
    let failing = true;
    const handle = createWebhookHandler({
      secret: SECRET,
      logger,
      onPaymentPaid: () => {
        if (failing) throw new TypeError('cannot read properties of undefined (reading "credit")');
      },
    });
    const a = samplePaymentPaidEvent({ orderNo: 'a' });
    const b = samplePaymentPaidEvent({ orderNo: 'b' });
    for (let i = 0; i < 4; i++) expect((await handle(delivery(a))).status).toBe(500);
    expect((await handle(delivery(b))).status).toBe(500);
    const errors = logger.at('error');
    // a's first failure, a's second (short), b's first: a's third and fourth are held back for the count.
    expect(errors.map((e) => [e.fields.paymentId, e.fields.err === undefined ? 'short' : 'stack'])).toEqual([
      [a.paymentId, 'stack'],
      [a.paymentId, 'short'],
      [b.paymentId, 'stack'],
    ]);
    expect((errors[0]?.fields.err as Error | undefined)?.stack).toMatch(/TypeError: cannot read properties/);
    expect(errors[1]?.message).toBe(
      'onPaymentPaid failed again (failure 2 of this payment here; its stack was logged at the first): TypeError: cannot read properties of undefined (reading "credit")',
    );
    expect(errors[1]?.fields).toMatchObject({ code: 'HANDLER_FAILED', status: 500, failures: 2 });
    expect(errors[1]?.message).not.toContain('\n');

    await vi.advanceTimersByTimeAsync(10_000);
    expect(logger.at('error').slice(3)).toEqual([
      {
        level: 'error',
        fields: { code: 'HANDLER_FAILED', status: 500, suppressed: 2 },
        message:
          '2 more attempts of payments that had failed before failed again with HANDLER_FAILED in the last 10 s.',
      },
    ]);

    // Fixed and credited: the payment is forgotten, so a failure after that would be news with its stack.
    failing = false;
    expect((await handle(delivery(a))).status).toBe(200);
    expect(logger.at('info').map((e) => e.message)).toEqual(['Payment credited.']);
  });

  it('a payment that failed, was credited by another path and fails again logs its stack again', async () => {
    const logger = recordingLogger();
    let fail = true;
    const handle = createWebhookHandler({
      secret: SECRET,
      logger,
      onPaymentPaid: () => {
        if (fail) throw new Error('down');
      },
    });
    const a = samplePaymentPaidEvent();
    await handle(delivery(a));
    fail = false;
    await handle(delivery(a)); // credited: a settles
    const c = samplePaymentPaidEvent();
    fail = true;
    await handle(delivery(c));
    await handle(delivery(c));
    expect(logger.at('error').map((e) => e.fields.err !== undefined)).toEqual([true, true, false]);
  });

  it('remembers a bounded number of payments, the least recently failed forgotten first', () => {
    const failing = new FailingPayments(3);
    expect(['p1', 'p2', 'p3'].map((p) => failing.failed(p))).toEqual([1, 1, 1]);
    expect(failing.failed('p1')).toBe(2); // p1 is now the most recent
    expect(failing.failed('p4')).toBe(1); // p2, the least recent, goes
    expect(failing.size).toBe(3);
    expect(failing.failed('p2')).toBe(1);
    expect(failing.failed('p1')).toBe(3);
    for (let i = 0; i < 10_000; i++) failing.failed(`flood-${i}`);
    expect(failing.size).toBe(3);
  });
});

describe("service-pay listen's reachability check is not logged as a refused delivery", () => {
  const unsigned = (headers: Record<string, string | string[]>) => ({
    method: 'POST',
    rawBody: '{}',
    headers: { 'content-type': 'application/json', ...headers },
  });

  it('an unsigned POST marked x-service-pay-probe: 401 as any, logged at debug; the unmarked one at warn', async () => {
    const logger = recordingLogger();
    const outcomes: string[] = [];
    const handle = createWebhookHandler({
      secret: SECRET,
      logger,
      onOutcome: (o) => void outcomes.push(`${o.outcome} ${o.code}`),
      onPaymentPaid: () => undefined,
    });
    const probe = await handle(unsigned({ 'x-service-pay-probe': 'listen' }));
    expect(probe.status).toBe(401);
    expect(JSON.parse(probe.body)).toMatchObject({ error: 'MISSING_SIGNATURE' });
    expect(logger.at('warn')).toEqual([]);
    expect(logger.at('debug')).toEqual([
      expect.objectContaining({ fields: { code: 'MISSING_SIGNATURE', status: 401, probe: true } }),
    ]);
    // The same request without the mark is what a scanner sends: a refusal, at warn.
    await handle(unsigned({}));
    expect(logger.at('warn').map((e) => e.fields.code)).toEqual(['MISSING_SIGNATURE']);
    expect(outcomes).toEqual(['refused MISSING_SIGNATURE', 'refused MISSING_SIGNATURE']);
  });

  it('the mark does not quiet a signed request, nor a mark sent twice, nor a Headers or Map spelling of it', async () => {
    const logger = recordingLogger();
    const refusals = () => logger.at('warn').filter((e) => e.fields.hint !== true);
    const handle = createWebhookHandler({ secret: SECRET, logger, onPaymentPaid: () => undefined });
    const { body, headers } = signWebhook({ event: samplePaymentPaidEvent(), secret: 'whsec_someone_else' });
    expect(
      (await handle({ method: 'POST', rawBody: body, headers: { ...headers, 'x-service-pay-probe': '1' } })).status,
    ).toBe(401);
    expect(refusals().map((e) => e.fields.code)).toEqual(['SIGNATURE_MISMATCH']);
    await handle(unsigned({ 'x-service-pay-probe': ['1', '2'] }));
    expect(refusals().map((e) => e.fields.code)).toEqual(['SIGNATURE_MISMATCH', 'MISSING_SIGNATURE']);
    // Other spellings of the same mark are the same mark: quiet.
    const quiet = recordingLogger();
    const other = createWebhookHandler({ secret: SECRET, logger: quiet, onPaymentPaid: () => undefined });
    await other({
      method: 'POST',
      rawBody: '{}',
      headers: new Headers({ 'content-type': 'application/json', 'X-Service-Pay-Probe': '1' }),
    });
    await other({
      method: 'POST',
      rawBody: '{}',
      headers: { 'Content-Type': 'application/json', 'X-SERVICE-PAY-PROBE': '1' },
    });
    expect(quiet.at('warn')).toEqual([]);
  });
});
