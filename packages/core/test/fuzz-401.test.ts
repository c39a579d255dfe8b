import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createWebhookHandler, STATUS_BY_CODE, type WebhookResponse } from '../src/index.js';
import { leastCpuPerRun } from './support/cpu-cost.js';

const SECRET = 'whsec_fuzzing_the_refusals_0123';
const MAX_BODY = 8_192;

// Anyone can reach the refusal path: it must answer a coded 4xx to anything, and no input may cost much
// more than a plain mismatch of the largest body generated here (a cost quadratic in anything would).
describe('fuzz: the refusal path answers a coded 4xx to anything, at the cost of a plain mismatch', () => {
  const now = Math.floor(Date.now() / 1000);
  const hex = fc.stringMatching(/^[0-9a-f]{64}$/);
  // Bodies: random text and bytes, and runs of the characters a body-shape scan looks at (the shapes that
  // made a backtracking RegExp quadratic), up to 8 KB.
  const run = fc
    .tuple(
      fc.constantFrom('', '{', ' {', '{"a":1,'),
      fc.constantFrom('\n', '\n ', ' \n', '\t', '\r\n', '"', '\n"', 'A', 'QUJD', '=', '{', '\\u'),
      fc.integer({ min: 1, max: 2_000 }),
    )
    .map(([head, unit, times]) => (head + unit.repeat(times)).slice(0, MAX_BODY));
  const body = fc.oneof(
    run,
    fc.string({ maxLength: 2_000 }),
    fc.string({ maxLength: 300, unit: 'grapheme' }),
    fc.uint8Array({ maxLength: MAX_BODY }),
    fc.base64String({ maxLength: 4_000 }),
  );
  // Signature headers: well-formed and wrong (timely or not, one or many v1), and anything at all.
  const signature = fc.oneof(
    hex.map((v1) => `t=${now},v1=${v1}`),
    fc.tuple(fc.integer({ min: 0, max: 2 ** 40 }), hex).map(([t, v1]) => `t=${t},v1=${v1}`),
    fc.array(hex, { minLength: 2, maxLength: 6 }).map((v1s) => `t=${now},${v1s.map((v) => `v1=${v}`).join(',')}`),
    fc.string({ maxLength: 400 }),
    fc.array(fc.string({ maxLength: 80 }), { maxLength: 3 }),
    fc.constant(undefined),
  );
  const request = fc.record({ body, signature, event: fc.constantFrom('payment.paid', 'x', undefined) });
  type Case = { body: string | Uint8Array; signature: string | string[] | undefined; event: string | undefined };

  const silent = { warn: () => {}, error: () => {} };
  const handler = () => createWebhookHandler({ secret: SECRET, logger: silent, onPaymentPaid: () => {} });
  const send = (handle: ReturnType<typeof handler>, c: Case) =>
    handle({
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-service-signature': c.signature,
        'x-service-event': c.event,
        'x-service-delivery': 'dl_fuzz',
      },
      rawBody: c.body,
    });

  const expectCoded4xx = (answer: WebhookResponse) => {
    expect(answer.status).toBeGreaterThanOrEqual(400);
    expect(answer.status).toBeLessThan(500);
    const { error } = JSON.parse(answer.body) as { error: keyof typeof STATUS_BY_CODE };
    expect(STATUS_BY_CODE[error]).toBe(answer.status);
  };

  it('anything at all: a coded 4xx, never a 5xx or a throw', async () => {
    const handle = handler();
    await fc.assert(
      fc.asyncProperty(request, async (c) => {
        expectCoded4xx(await send(handle, c));
      }),
      { numRuns: 400 },
    );
  });

  it('no input costs more than a few plain mismatches of the largest body', async () => {
    const cases = fc.sample(request, 100);
    const plain: Case = { body: 'x'.repeat(MAX_BODY), signature: `t=${now},v1=${'ab'.repeat(32)}`, event: 'x' };
    // Each input in a handler of its own, repeated, as a flood of the same request would be.
    const answers: Array<Promise<WebhookResponse>> = [];
    const task = (c: Case) => {
      const handle = handler();
      return () => void answers.push(send(handle, c));
    };
    const baseline = task(plain);
    const tasks = cases.map(task);
    const [, ...costs] = leastCpuPerRun([baseline, ...tasks], 30, 3);
    // The costliest few measured again, longer: one input unlucky in every round (a GC, a busy neighbour)
    // must not fail the test, while a cost that grows with the input is high in every round.
    const costliest = costs
      .map((cost, i) => ({ cost, i }))
      .sort((a, b) => b.cost - a.cost)
      .slice(0, 3);
    const [again = 0, ...worst] = leastCpuPerRun(
      [baseline, ...costliest.map(({ i }) => tasks[i] as () => void)],
      30,
      7,
    );
    worst.forEach((cost, k) => {
      const input = JSON.stringify(cases[costliest[k]?.i ?? 0])?.slice(0, 200);
      // A linear path keeps every input near or under the baseline (no body is larger); a quadratic one on
      // a few KB is 100x. 5x leaves room for a loaded machine.
      expect(cost / again, `input ${input}`).toBeLessThan(5);
    });
    for (const answer of await Promise.all(answers)) expectCoded4xx(answer);
  }, 60_000);
});
