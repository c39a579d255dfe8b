import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  createFetchHandler,
  createWebhookHandler,
  signWebhook,
  verifyWebhook,
  WebhookError,
  type WebhookResponse,
} from '../src/index.js';
import { samplePaymentPaidEvent } from '../src/testing/index.js';
import { looksPrettyPrinted, MismatchHints } from '../src/verify/mismatch-hint.js';
import { leastCpuPerRun } from './support/cpu-cost.js';
import { recordingLogger } from './support/recording-logger.js';

const SIGNED_WITH = 'whsec_the_real_webhook_secret';

/** A delivery signed with the real secret, its body as a handler might wrongly receive it. */
function delivery(reshape: (body: string) => string = (body) => body) {
  const { body, headers } = signWebhook({ event: samplePaymentPaidEvent(), secret: SIGNED_WITH });
  return { method: 'POST', rawBody: reshape(body), headers: headers as Record<string, string> };
}

/** Answers and warn lines of a handler with `secret` for three deliveries. */
async function refusedBy(secret: string | string[], reshape?: (body: string) => string) {
  const logger = recordingLogger();
  const handle = createWebhookHandler({ secret, logger, onPaymentPaid: () => {} });
  const answers: WebhookResponse[] = [];
  for (let i = 0; i < 3; i++) answers.push(await handle(delivery(reshape)));
  const hints = logger.at('warn').filter((line) => line.fields.hint === true);
  return { answers, hints, logger };
}

const base64 = (body: string) => Buffer.from(body).toString('base64');
const pretty = (body: string) => JSON.stringify(JSON.parse(body), null, 2);

describe('a signature mismatch names its likeliest cause, in the log only', () => {
  it.each([
    ['a secret with whitespace inside it', 'whsec_the_real webhook_secret', undefined, /contains whitespace/],
    ['an API secret', 'sk_live_the_api_secret_0123', undefined, /looks like an API secret/],
    ['a base64-encoded body (API Gateway, Lambda)', SIGNED_WITH, base64, /base64-encoded/],
    ['a re-serialized (pretty-printed) body', SIGNED_WITH, pretty, /re-serialized/],
    ['anything else', 'whsec_some_other_endpoint_secret', undefined, /exactly as received/],
  ] as const)('%s', async (_case, secret, reshape, hint) => {
    const { answers, hints, logger } = await refusedBy(secret, reshape);
    for (const answer of answers) {
      expect(answer.status).toBe(401);
      // One fixed message per code: the caller learns nothing about the configured secrets or the hint.
      expect(JSON.parse(answer.body)).toEqual({
        error: 'SIGNATURE_MISMATCH',
        message: 'No signature in X-Service-Signature matches.',
      });
    }
    expect(hints).toHaveLength(1); // once, however many deliveries fail the same way
    expect(hints[0]?.message).toMatch(hint);
    expect(logger.at('error')).toHaveLength(0);
  });

  it('names the rotation entry that has whitespace in it', async () => {
    const { hints } = await refusedBy(['whsec_current_secret_0123', 'whsec_old secret_0123']);
    expect(hints[0]?.message).toMatch(/options\.secret\[1\] contains whitespace/);
  });

  it('logs each distinct hint once: a base64 body after a plain mismatch is still explained', async () => {
    const logger = recordingLogger();
    const handle = createWebhookHandler({ secret: SIGNED_WITH, logger, onPaymentPaid: () => {} });
    await handle(delivery(pretty));
    await handle(delivery(pretty));
    await handle(delivery(base64));
    const hints = logger.at('warn').filter((line) => line.fields.hint === true);
    expect(hints.map((h) => h.message)).toEqual([
      expect.stringMatching(/re-serialized/),
      expect.stringMatching(/base64/),
    ]);
  });

  it("gives verifyWebhook's caller (a developer) the hint in the error message", async () => {
    const d = delivery(base64);
    const error = await verifyWebhook({ rawBody: d.rawBody, headers: d.headers }, { secret: SIGNED_WITH }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(WebhookError);
    expect((error as WebhookError).code).toBe('SIGNATURE_MISMATCH');
    expect((error as WebhookError).message).toMatch(/^No signature in X-Service-Signature matches\. .*base64/);
    expect((error as WebhookError).hint).toMatch(/base64/);
  });

  it('answers every 401 code with one fixed message, whatever the configuration', async () => {
    const bodies = new Set<string>();
    for (const secret of ['sk_live_the_api_secret_0123', 'whsec_x y_0123456789', SIGNED_WITH]) {
      const handle = createWebhookHandler({ secret, logger: recordingLogger(), onPaymentPaid: () => {} });
      const d = delivery(secret === SIGNED_WITH ? base64 : undefined);
      bodies.add((await handle(d)).body);
      bodies.add((await handle({ ...d, headers: { ...d.headers, 'x-service-signature': 'nonsense' } })).body);
      bodies.add((await handle({ ...d, headers: { ...d.headers, 'x-service-signature': '' } })).body);
    }
    // Nine refusals under three configurations: exactly one body per code.
    expect([...bodies].map((b) => JSON.parse(b).error).sort()).toEqual([
      'MALFORMED_SIGNATURE',
      'MISSING_SIGNATURE',
      'SIGNATURE_MISMATCH',
    ]);
  });
});

describe('the cost of a mismatch hint', () => {
  const secret = 'whsec_cost_of_the_hint_0123';
  const now = Math.floor(Date.now() / 1000);
  // Well-formed, timely, and wrong: the request gets as far as the hint.
  const headers = {
    'content-type': 'application/json',
    'x-service-signature': `t=${now},v1=${'ab'.repeat(32)}`,
    'x-service-event': 'payment.paid',
    'x-service-delivery': 'dl_cost',
  };
  const newlines = `{${'\n'.repeat(4095)}`;
  const plain = 'x'.repeat(4096); // as many bytes, nothing to recognise

  it('regression: "{" and 4,095 line breaks cost a mismatch of the same size, not 100x (verifyWebhook)', async () => {
    const verify = (rawBody: string) => () => {
      verifyWebhook({ rawBody, headers }, { secret }).catch(() => {});
    };
    // Before: 400x (the RegExp /^\s*\{[\s\S]*\n\s+"/ backtracked over the line breaks); now about 1.6x.
    const [attack = 0, baseline = 0] = leastCpuPerRun([verify(newlines), verify(plain)], 40);
    expect(attack / baseline).toBeLessThan(5);
  }, 60_000);

  it('regression: the same body through a handler costs a mismatch of the same size too', async () => {
    const logger = recordingLogger();
    const handle = createWebhookHandler({ secret, logger, onPaymentPaid: () => {} });
    const answers: Array<Promise<WebhookResponse>> = [];
    const send = (rawBody: string) => () => {
      answers.push(handle({ method: 'POST', headers, rawBody }));
    };
    const [attack = 0, baseline = 0] = leastCpuPerRun([send(newlines), send(plain)], 40);
    expect(attack / baseline).toBeLessThan(5);
    for (const answer of await Promise.all(answers)) expect(answer.status).toBe(401);
    // The hint was still logged, once: the fast path did not lose it.
    const hints = logger.at('warn').filter((line) => line.fields.hint === true);
    expect(hints.map((h) => h.message)).toEqual([expect.stringMatching(/exactly as received/)]);
  }, 60_000);

  it('gives each hint once, and once every hint was given does not read the body at all', () => {
    let reads = 0;
    const watched = (text: string) =>
      new Proxy(new TextEncoder().encode(text), {
        get(target, key) {
          reads++;
          return Reflect.get(target, key);
        },
      });
    const hints = new MismatchHints([secret]);
    const body = signWebhook({ event: samplePaymentPaidEvent(), secret }).body;
    expect(hints.next(watched(body))).toMatch(/exactly as received/);
    expect(hints.next(watched(body))).toBeUndefined();
    expect(hints.next(watched(pretty(body)))).toMatch(/re-serialized/);
    expect(hints.next(watched(base64(body)))).toMatch(/base64/);
    reads = 0;
    for (const shape of [body, pretty(body), base64(body), newlines])
      expect(hints.next(watched(shape))).toBeUndefined();
    expect(reads).toBe(0);

    // A secret that explains every mismatch by itself: one hint, then nothing is read either.
    const spaced = new MismatchHints(['whsec_with space_0123']);
    expect(spaced.next(watched(body))).toMatch(/contains whitespace/);
    reads = 0;
    expect(spaced.next(watched(pretty(body)))).toBeUndefined();
    expect(reads).toBe(0);
  });

  it('the one-pass scan says what /^\\s*\\{[\\s\\S]*\\n\\s+"/ said, on any text', () => {
    const shapes = fc.string({
      unit: fc.constantFrom('{', '}', '"', '\n', ' ', '\t', '\r', '\u00a0', '\u2028', '\ufeff', 'a', ':'),
      maxLength: 40,
    });
    fc.assert(
      fc.property(fc.oneof(shapes, fc.string({ maxLength: 40 })), (text) => {
        expect(looksPrettyPrinted(text)).toBe(/^\s*\{[\s\S]*\n\s+"/.test(text));
      }),
      { numRuns: 5000 },
    );
  });
});

describe('a fetch Request whose body is locked or disturbed', () => {
  const SECRET = 'whsec_fetch_locked_body_0123';
  it('answers RAW_BODY_UNAVAILABLE with its fix (not a 500 blamed on the handler)', async () => {
    const logger = recordingLogger();
    let ran = 0;
    const handle = createFetchHandler({ secret: SECRET, logger, onPaymentPaid: () => void ran++ });
    const { body, headers } = signWebhook({ event: samplePaymentPaidEvent(), secret: SECRET });
    const request = new Request('http://localhost/', { method: 'POST', body, headers });
    request.body?.getReader(); // a framework holds a reader on it, but has not read it: bodyUsed is false
    expect(request.bodyUsed).toBe(false);
    const res = await handle(request);
    expect(res.status).toBe(500);
    const answer = (await res.json()) as { error: string; message: string };
    expect(answer.error).toBe('RAW_BODY_UNAVAILABLE');
    expect(answer.message).toMatch(/locked/);
    expect(ran).toBe(0);
  });

  it('answers RAW_BODY_UNAVAILABLE when reading the body getter itself throws (a framework wrapper)', async () => {
    const handle = createFetchHandler({ secret: SECRET, logger: recordingLogger(), onPaymentPaid: () => {} });
    const { body, headers } = signWebhook({ event: samplePaymentPaidEvent(), secret: SECRET });
    const request = new Request('http://localhost/', { method: 'POST', body, headers });
    const wrapped = new Proxy(request, {
      get(target, property) {
        if (property === 'body') throw new TypeError("Cannot read properties of undefined (reading 'getReader')");
        const value = Reflect.get(target, property, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const res = await handle(wrapped);
    expect(res.status).toBe(500);
    expect(((await res.json()) as { error: string }).error).toBe('RAW_BODY_UNAVAILABLE');
  });
});
