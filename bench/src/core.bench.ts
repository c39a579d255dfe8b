import { createWebhookHandler, MemoryDedupeStore, verifyWebhook } from '@service-pay/core';
import { Webhook } from 'standardwebhooks';
import Stripe from 'stripe';
import { handRolledVerify as handRolledVerifyWith } from '../../packages/express/bench/load.js';
import { SECRET, signedDeliveries } from './fixtures.js';
import { compare, report, type TargetCheck } from './harness.js';

/** The baseline: the least a correct receiver must do, written by hand (shared with the adapter benchmarks). */
const handRolledVerify = (body: Buffer, header: string) => handRolledVerifyWith(body, header, SECRET);

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

  const verifyResults = await compare([
    {
      name: 'hand-rolled createHmac+timingSafeEqual+JSON.parse',
      fn: () => handRolledVerify(one.body, signatureHeader),
    },
    { name: 'verifyWebhook', fn: () => verifyWebhook({ rawBody: one.body, headers: one.headers }, options) },
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
      { of: 'verifyWebhook', over: 'hand-rolled createHmac+timingSafeEqual+JSON.parse', atLeast: 0.75 },
      { of: 'verifyWebhook', over: 'stripe webhooks.constructEvent', atLeast: 1.5 },
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
          store: new MemoryDedupeStore({ maxEntries }),
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

  const handlerResults = await compare([
    {
      name: 'hand-rolled createHmac+timingSafeEqual+JSON.parse',
      fn: () => handRolledVerify(one.body, signatureHeader),
    },
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
      {
        of: 'handler, memory store, fresh keys',
        over: 'hand-rolled createHmac+timingSafeEqual+JSON.parse',
        atLeast: 0.4,
      },
    ]),
  );
  return checks;
}
