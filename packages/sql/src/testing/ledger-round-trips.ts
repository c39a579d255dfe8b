import { createWebhookHandler, signWebhook } from '@service-pay/core';
import { samplePaymentPaidEvent } from '@service-pay/core/testing';
import type { CreditingStore } from './deliveries.js';
import type { RoundTripProxy } from './round-trip-proxy.js';

/**
 * Round trips of whole deliveries through the webhook pipeline on a store that keeps a ledger: a fresh
 * credit, a duplicate, a failure (the handler throws: its rollback, then the ledger's one statement), the
 * same payment's success after it (the entry closed: one statement more) and a fresh credit of a payment
 * that never failed (nothing of the ledger).
 *
 * @example
 * ```ts
 * const { fresh, failure, recovery } = await pipelineRoundTrips(proxy, subject, ended);
 * ```
 */
export interface PipelineRoundTrips {
  fresh: number;
  duplicate: number;
  failure: number;
  recovery: number;
  freshAfter: number;
}

/** Counts `PipelineRoundTrips` for `subject`; `ended` waits until no transaction is open on the server. */
export async function pipelineRoundTrips<Tx>(
  proxy: RoundTripProxy,
  subject: CreditingStore<Tx>,
  ended: () => Promise<void>,
  withLedger = true,
): Promise<PipelineRoundTrips> {
  const secret = 'whsec_round_trips_ledger';
  let broken = false;
  const { store } = subject;
  const handle = createWebhookHandler({
    secret,
    // Without its ledger: the same store's transactions, as they cost before the ledger was kept.
    store: withLedger
      ? store
      : { kind: 'transactional' as const, begin: (key, fingerprint, draft) => store.begin(key, fingerprint, draft) },
    logger: { warn() {}, error() {} },
    onPaymentPaid: async (event, ctx) => {
      if (broken) throw new Error('handler broken');
      await subject.credit((ctx as unknown as { tx: Tx }).tx, event.paymentId);
    },
  });
  const deliver = async (event: ReturnType<typeof samplePaymentPaidEvent>, status: number) => {
    const before = proxy.count;
    const { body, headers } = signWebhook({ event, secret });
    const answer = await handle({ method: 'POST', headers, rawBody: body });
    if (answer.status !== status) throw new Error(`answered ${answer.status} ${answer.body}, expected ${status}`);
    await ended();
    return proxy.count - before;
  };
  // Warm-up: the ledger's table is made on its first write if missing, clients prepare on first use and
  // pools open connections (their set-up statements are counted too).
  for (let i = 0; i < 2; i++) {
    broken = true;
    await deliver(samplePaymentPaidEvent(), 500);
    broken = false;
    await deliver(samplePaymentPaidEvent(), 200);
  }
  const fresh = samplePaymentPaidEvent();
  const counts = { fresh: await deliver(fresh, 200), duplicate: await deliver(fresh, 200) };
  // The least of two: a pool that opens a connection meanwhile adds its set-up to one of them.
  let failure = Number.POSITIVE_INFINITY;
  let recovery = Number.POSITIVE_INFINITY;
  for (let i = 0; i < 2; i++) {
    const failing = samplePaymentPaidEvent();
    broken = true;
    failure = Math.min(failure, await deliver(failing, 500));
    broken = false;
    recovery = Math.min(recovery, await deliver(failing, 200));
  }
  const freshAfter = await deliver(samplePaymentPaidEvent(), 200);
  return { ...counts, failure, recovery, freshAfter };
}

/**
 * The pipeline's deliveries cost what the store's own do: a fresh credit and a duplicate send nothing for
 * the ledger, a failure at most one statement more than without a ledger (its transaction's), and the
 * success after it one more (the entry's closing). Prints both counts.
 *
 * @example
 * ```ts
 * await checkPipelineRoundTrips(proxy, 'PostgreSQL', subject, { fresh: 4, duplicate: 3 }, ended);
 * ```
 */
export async function checkPipelineRoundTrips<Tx>(
  proxy: RoundTripProxy,
  database: string,
  subject: CreditingStore<Tx> & { name: string },
  store: { fresh: number; duplicate: number },
  ended: () => Promise<void>,
): Promise<void> {
  const b = await pipelineRoundTrips(proxy, subject, ended, false);
  const p = await pipelineRoundTrips(proxy, subject, ended, true);
  const line = (c: PipelineRoundTrips) =>
    `fresh ${c.fresh}, duplicate ${c.duplicate}, failure ${c.failure}, success after the failure ${c.recovery}, fresh after ${c.freshAfter}`;
  console.info(`pipeline round trips on ${database}, ${subject.name}: without a ledger ${line(b)}; with ${line(p)}`);
  const wrong: string[] = [];
  if (p.fresh > Math.max(store.fresh, b.fresh) || p.freshAfter > b.freshAfter) {
    wrong.push(`fresh ${p.fresh}/${p.freshAfter} > ${b.fresh}/${b.freshAfter}`);
  }
  if (p.duplicate > Math.max(store.duplicate, b.duplicate)) wrong.push(`duplicate ${p.duplicate} > ${b.duplicate}`);
  if (p.failure > b.failure + 1) wrong.push(`failure ${p.failure} > ${b.failure} + 1`);
  if (p.recovery > b.recovery + 1) wrong.push(`success after a failure ${p.recovery} > ${b.recovery} + 1`);
  if (wrong.length > 0) throw new Error(`${subject.name} on ${database}, through the pipeline: ${wrong.join('; ')}`);
}
