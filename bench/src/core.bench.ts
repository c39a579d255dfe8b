import { createHmac, timingSafeEqual } from 'node:crypto';
import { handRolledVerify as handRolledVerifyWith, SECRET, signedDeliveries } from '@service-pay/bench-kit';
import { createWebhookHandler, MemoryDedupeStore, verifyWebhook } from '@service-pay/core';
import { Webhook } from 'standardwebhooks';
import Stripe from 'stripe';
import { compare, report, type TargetCheck } from './harness.js';

/** The baseline: the least a correct receiver must do, written by hand (shared with the adapter benchmarks). */
const handRolledVerify = (body: Buffer, header: string) => handRolledVerifyWith(body, header, SECRET);

/** A secret rotated in beside the one that signs: during a rotation the old one still signs, listed second. */
const NEW_SECRET = 'whsec_bench_rotated_in_0123456789abcdef';
/** The hand-rolled receiver during a rotation: each secret's HMAC compared in turn, the new one first. */
const handRolledRotating = (body: Buffer, header: string) => {
  const comma = header.indexOf(',');
  const t = header.slice(2, comma);
  const received = Buffer.from(header.slice(comma + 4), 'hex');
  const signedWith = (secret: string) => {
    const expected = createHmac('sha256', secret).update(`${t}.`).update(body).digest();
    return received.length === expected.length && timingSafeEqual(received, expected);
  };
  if (!signedWith(NEW_SECRET) && !signedWith(SECRET)) throw new Error('bad signature');
  if (Math.abs(Date.now() / 1000 - Number(t)) > 300) throw new Error('stale');
  return JSON.parse(body.toString('utf8'));
};

export async function run(): Promise<TargetCheck[]> {
  const [one] = signedDeliveries(1);
  if (one === undefined) throw new Error('no fixture');
  const signatureHeader = one.headers['x-service-signature'] as string;
  const options = { secret: SECRET };

  // stripe-node's and standard-webhooks' verifiers on the same body, in their own schemes.
  const stripe = new Stripe('sk_test_bench', { telemetry: false });
  const swSecret = `whsec_${Buffer.from(SECRET).toString('base64')}`;
  const sw = new Webhook(swSecret);
  const swHeaders = {
    'webhook-id': 'msg_bench',
    'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
    'webhook-signature': '',
  };
  swHeaders['webhook-signature'] = sw.sign(
    swHeaders['webhook-id'],
    new Date(Number(swHeaders['webhook-timestamp']) * 1000),
    one.text,
  );

  // Sanity: every verifier accepts the fixture before anything is timed.
  handRolledVerify(one.body, signatureHeader);
  await verifyWebhook({ rawBody: one.body, headers: one.headers }, options);
  stripe.webhooks.constructEvent(one.body, signatureHeader, SECRET);
  sw.verify(one.text, swHeaders);

  const rotating = [NEW_SECRET, SECRET];
  const verifyResults = await compare([
    {
      name: 'hand-rolled createHmac+timingSafeEqual+JSON.parse',
      fn: () => handRolledVerify(one.body, signatureHeader),
    },
    { name: 'hand-rolled, two secrets (rotation)', fn: () => handRolledRotating(one.body, signatureHeader) },
    // Options as an app holds them: one object for every call.
    { name: 'verifyWebhook', fn: () => verifyWebhook({ rawBody: one.body, headers: one.headers }, options) },
    // Options as the README writes them: a fresh object on every call.
    {
      name: 'verifyWebhook, options inline',
      fn: () => verifyWebhook({ rawBody: one.body, headers: one.headers }, { secret: SECRET }),
    },
    // A rotation list, the old secret (which signs) second: two HMACs.
    {
      name: 'verifyWebhook, rotating [new, old]',
      fn: () => verifyWebhook({ rawBody: one.body, headers: one.headers }, { secret: rotating }),
    },
    // The same list with the signing secret first, as after the sender switched.
    {
      name: 'verifyWebhook, rotating [signing, other]',
      fn: () => verifyWebhook({ rawBody: one.body, headers: one.headers }, { secret: [SECRET, NEW_SECRET] }),
    },
    {
      name: 'stripe webhooks.constructEvent',
      fn: () => stripe.webhooks.constructEvent(one.body, signatureHeader, SECRET),
    },
    { name: 'standardwebhooks verify', fn: () => sw.verify(one.text, swHeaders) },
  ]);
  const checks = report(
    'verify one delivery (~330-byte body, Buffer)',
    verifyResults,
    'hand-rolled createHmac+timingSafeEqual+JSON.parse',
    [
      ...['verifyWebhook', 'verifyWebhook, options inline', 'verifyWebhook, rotating [signing, other]'].flatMap(
        (of) => [
          { of, over: 'hand-rolled createHmac+timingSafeEqual+JSON.parse', atLeast: 1.2 },
          { of, over: 'stripe webhooks.constructEvent', atLeast: 1.8 },
        ],
      ),
      // Two secrets tried against the hand-rolled receiver that also tries two.
      { of: 'verifyWebhook, rotating [new, old]', over: 'hand-rolled, two secrets (rotation)', atLeast: 1.2 },
    ],
  );

  // End to end through the exactly-once pipeline with the memory store. Fresh keys need a fresh pool per
  // round: each round gets a new handler and store and walks the pool once.
  const pool = signedDeliveries(60_000);
  const freshKeys = (name: string, maxEntries: number) => {
    let handle = createWebhookHandler({ secret: SECRET, onPaymentPaid: () => {} });
    let next = 0;
    return {
      name,
      setup: () => {
        handle = createWebhookHandler({
          secret: SECRET,
          // Quiet: the full store logs its (rate-limited) evictions, which is not what is measured here.
          store: new MemoryDedupeStore({ maxEntries, logger: { warn: () => {}, error: () => {} } }),
          onPaymentPaid: () => {},
        });
        next = 0;
      },
      maxOpsPerRound: pool.length,
      fn: () => {
        const d = pool[next++] as (typeof pool)[number];
        return handle({ method: 'POST', headers: d.headers, rawBody: d.body });
      },
    };
  };
  const duplicateHandler = createWebhookHandler({ secret: SECRET, onPaymentPaid: () => {} });
  await duplicateHandler({ method: 'POST', headers: one.headers, rawBody: one.body });

  // What a merchant would write instead of the handler, the anchor of the dedupe ratios: the hand-rolled check, then a
  // Map of paymentIds seen. No lease, no fingerprint, no deadline, no retention: the least dedupe there is.
  const handRolledWithMap = (name: string, fresh: boolean) => {
    let seen = new Map<string, true>();
    let next = 0;
    return {
      name,
      setup: () => {
        seen = new Map();
        next = 0;
      },
      ...(fresh ? { maxOpsPerRound: pool.length } : {}),
      fn: () => {
        const d = fresh ? (pool[next++] as (typeof pool)[number]) : one;
        const event = handRolledVerify(d.body, d.headers['x-service-signature'] as string) as { paymentId: string };
        if (seen.has(event.paymentId)) return 'duplicate';
        seen.set(event.paymentId, true);
        return 'credited';
      },
    };
  };
  const primeDuplicate = handRolledWithMap('hand-rolled check + Map dedupe, duplicates', false);

  const handlerResults = await compare([
    {
      name: 'hand-rolled createHmac+timingSafeEqual+JSON.parse',
      fn: () => handRolledVerify(one.body, signatureHeader),
    },
    handRolledWithMap('hand-rolled check + Map dedupe, fresh keys', true),
    primeDuplicate,
    freshKeys('handler, memory store, fresh keys', 100_000),
    // A store at its maxEntries bound evicts on every claim; this must cost no more than the above.
    freshKeys('handler, memory store full (maxEntries 20,000), fresh keys', 20_000),
    {
      name: 'handler, memory store, duplicates',
      fn: () => duplicateHandler({ method: 'POST', headers: one.headers, rawBody: one.body }),
    },
  ]);
  checks.push(
    ...report('exactly-once handler end to end', handlerResults, 'hand-rolled createHmac+timingSafeEqual+JSON.parse', [
      // Exactly once must cost little next to verifying: at least 0.8x of the bare check's speed.
      {
        of: 'handler, memory store, fresh keys',
        over: 'hand-rolled createHmac+timingSafeEqual+JSON.parse',
        atLeast: 0.8,
      },
      // And next to the least dedupe a merchant would write: at least 0.9x of the check with a Map of ids seen.
      {
        of: 'handler, memory store, fresh keys',
        over: 'hand-rolled check + Map dedupe, fresh keys',
        atLeast: 0.9,
      },
      {
        of: 'handler, memory store, duplicates',
        over: 'hand-rolled check + Map dedupe, duplicates',
        atLeast: 0.95,
      },
    ]),
  );
  return checks;
}
