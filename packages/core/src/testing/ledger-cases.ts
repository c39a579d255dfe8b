import type { PaymentPaidEvent } from '../event/payment-paid-event.js';
import { LEDGER_MESSAGE_MAX } from '../ledger/ledger-message.js';
import { type LedgerEntry, ledgerOf, type PaymentLedger } from '../ledger/payment-ledger.js';
import type { Outcome } from '../observe/outcome.js';
import { createWebhookHandler } from '../pipeline/create-webhook-handler.js';
import { createReconciler } from '../reconcile/create-reconciler.js';
import { signWebhook } from '../sign/sign-webhook.js';
import type { WebhookStore } from '../store/transactional-store.js';
import type { ConformanceCase } from './conformance.js';
import { samplePaymentPaidEvent } from './sample-event.js';

const SECRET = 'whsec_ledger_cases_secret';
const quiet = { warn() {}, error() {} };

/**
 * What the ledger cases are given: a store with a ledger, made fresh per case (its database may be shared:
 * the cases use payments of their own), and optionally a second store on the same database, to show that
 * a success seen by another process closes the entry for every reader.
 *
 * @example
 * ```ts
 * const subject: LedgerSubject = { make: async () => ({ store: new PostgresStore({ pool }) }) };
 * ```
 */
export interface LedgerSubject {
  make(): Promise<{ store: WebhookStore; cleanup?: () => Promise<void> }>;
  /** Another store on the same database (another process's view), when the store has a database to share. */
  another?(): Promise<{ store: WebhookStore; cleanup?: () => Promise<void> }>;
}

/**
 * The ledger's conformance cases, for any store that keeps one: failures recorded apart from the rolled-back
 * attempt, bounded and free of secrets; closed by a later success or a reconciliation; flagged on a payload
 * conflict; paged; nothing written for an unverified request. Plain cases for any runner.
 *
 * @example
 * ```ts
 * for (const c of ledgerConformance({ make: async () => ({ store: new MemoryDedupeStore() }) })) it(c.name, c.run);
 * ```
 */
export function ledgerConformance(subject: LedgerSubject): ConformanceCase[] {
  const withStore = (run: (store: WebhookStore, ledger: PaymentLedger) => Promise<void>) => async () => {
    const made = await subject.make();
    try {
      const ledger = ledgerOf(made.store);
      if (ledger === undefined) throw new Error('the store has no ledger');
      await run(made.store, ledger);
    } finally {
      await made.cleanup?.();
    }
  };
  return [
    {
      name: 'ledger: a failing handler leaves a failing entry, counted per attempt, its message bounded and secret-free',
      run: withStore(async (store, ledger) => {
        const outcomes: Outcome[] = [];
        const handle = handler(
          store,
          () => {
            throw new Error(`column "paid_at" does not exist (secret ${SECRET}) ${'x'.repeat(2_000)}`);
          },
          outcomes,
        );
        const event = samplePaymentPaidEvent({ amount: '10.25', tokenSymbol: 'USDC' });
        expectStatus(await send(handle, event), 500);
        expectStatus(await send(handle, event), 500);
        const entry = await mustStory(ledger, event.paymentId);
        check(entry.state === 'failing', `state ${entry.state}`);
        check(entry.attempts === 2, `attempts ${entry.attempts}`);
        check(entry.orderNo === event.orderNo && entry.amount === '10.25' && entry.tokenSymbol === 'USDC', 'fields');
        check(entry.lastError.code === 'HANDLER_FAILED', `code ${entry.lastError.code}`);
        check(entry.lastError.message.startsWith('column "paid_at" does not exist'), entry.lastError.message);
        check(!entry.lastError.message.includes(SECRET), 'the secret is in the message');
        check(entry.lastError.message.length <= LEDGER_MESSAGE_MAX, `message of ${entry.lastError.message.length}`);
        check(entry.firstFailedAt > 0 && entry.lastFailedAt >= entry.firstFailedAt, 'times');
        const listed = await allFailing(ledger);
        check(
          listed.some((e) => e.paymentId === event.paymentId),
          'not listed by failing()',
        );
        check((await ledger.counts()).failing >= 1, 'counts().failing');
        const changes = outcomes.map((o) => o.ledger?.change);
        check(changes[0] === 'opened' && changes[1] === 'failed', `outcome changes ${changes.join(',')}`);
        check(outcomes[1]?.ledger?.attempts === 2, 'outcome attempts');
      }),
    },
    {
      name: 'ledger: a later success closes the entry (closedBy webhook), and a duplicate after it sends nothing new',
      run: withStore(async (store, ledger) => {
        let broken = true;
        const outcomes: Outcome[] = [];
        const handle = handler(
          store,
          () => {
            if (broken) throw new Error('downstream down');
          },
          outcomes,
        );
        const event = samplePaymentPaidEvent();
        expectStatus(await send(handle, event), 500);
        broken = false;
        expectStatus(await send(handle, event), 200);
        const entry = await mustStory(ledger, event.paymentId);
        check(entry.state === 'closed', `state ${entry.state}`);
        check(entry.closedBy === 'webhook', `closedBy ${entry.closedBy}`);
        check(entry.attempts === 1, `attempts ${entry.attempts}`);
        check(outcomes[1]?.ledger?.change === 'closed', 'the success did not report the closing');
        const duplicate = await send(handle, event);
        check(duplicate.body.includes('"duplicate":true'), duplicate.body);
        check(outcomes[2]?.ledger === undefined, 'a duplicate reported a ledger change');
        check(!(await allFailing(ledger)).some((e) => e.paymentId === event.paymentId), 'still listed');
      }),
    },
    {
      name: 'ledger: a reconciliation after the sender gave up credits once and closes the entry (closedBy reconciliation)',
      run: withStore(async (store, ledger) => {
        let broken = true;
        let credits = 0;
        const onPaymentPaid = () => {
          if (broken) throw new Error('handler broken');
          credits++;
        };
        const handle = handler(store, onPaymentPaid, []);
        const event = samplePaymentPaidEvent();
        for (let i = 0; i < 3; i++) expectStatus(await send(handle, event), 500);
        broken = false;
        const { paymentId, orderNo, amount, tokenSymbol } = event;
        const reconciler = createReconciler({
          store,
          logger: quiet,
          getPayment: async () => ({ paymentId, orderNo, amount, tokenSymbol, status: 'PAID' }),
          onPaymentPaid,
        });
        const result = await reconciler.reconcile(paymentId);
        check(result.outcome === 'credited', `reconcile ${result.outcome}`);
        check(credits === 1, `credits ${credits}`);
        const entry = await mustStory(ledger, paymentId);
        check(entry.state === 'closed' && entry.closedBy === 'reconciliation', `${entry.state} ${entry.closedBy}`);
        check(entry.attempts === 3, `attempts ${entry.attempts}`);
        const after = await send(handle, event);
        check(after.status === 200 && after.body.includes('"duplicate":true'), after.body);
        check(credits === 1, `credits ${credits}`);
      }),
    },
    {
      name: 'ledger: a payload conflict flags the payment',
      run: withStore(async (store, ledger) => {
        const handle = handler(store, () => {}, []);
        const event = samplePaymentPaidEvent({ amount: '5.00' });
        expectStatus(await send(handle, event), 200);
        expectStatus(await send(handle, { ...event, amount: '500.00' }), 422);
        const entry = await mustStory(ledger, event.paymentId);
        check(entry.state === 'flagged' && entry.flag === 'payload-conflict', `${entry.state} ${entry.flag}`);
        check(entry.lastError.code === 'PAYLOAD_CONFLICT', entry.lastError.code);
        check(
          (await allFailing(ledger)).some((e) => e.paymentId === event.paymentId),
          'flagged not listed',
        );
      }),
    },
    {
      name: 'ledger: an unverified request writes nothing',
      run: withStore(async (store, ledger) => {
        const handle = handler(store, () => {
          throw new Error('never run');
        }, []);
        const event = samplePaymentPaidEvent();
        const { body, headers } = signWebhook({ event, secret: 'whsec_someone_else' });
        const answer = await handle({ method: 'POST', headers, rawBody: body });
        expectStatus(answer, 401);
        check((await ledger.story(event.paymentId)) === undefined, 'an unverified request left an entry');
      }),
    },
    {
      name: 'ledger: failing() pages by the most recent failure, each entry once',
      run: withStore(async (store, ledger) => {
        const handle = handler(store, () => {
          throw new Error('broken');
        }, []);
        const ids = new Set<string>();
        for (let i = 0; i < 7; i++) {
          const event = samplePaymentPaidEvent();
          ids.add(event.paymentId);
          expectStatus(await send(handle, event), 500);
        }
        const seen: LedgerEntry[] = [];
        let cursor: string | undefined;
        for (let pages = 0; pages < 10_000; pages++) {
          const page = await ledger.failing(cursor === undefined ? { limit: 3 } : { limit: 3, cursor });
          check(page.entries.length <= 3, `page of ${page.entries.length}`);
          seen.push(...page.entries);
          if (page.next === undefined) break;
          cursor = page.next;
        }
        const mine = seen.filter((e) => ids.has(e.paymentId));
        check(mine.length === 7, `listed ${mine.length} of 7`);
        check(new Set(seen.map((e) => e.paymentId)).size === seen.length, 'an entry listed twice');
        for (let i = 1; i < seen.length; i++) {
          check((seen[i - 1] as LedgerEntry).lastFailedAt >= (seen[i] as LedgerEntry).lastFailedAt, 'out of order');
        }
      }),
    },
    ...(subject.another === undefined
      ? []
      : [
          {
            name: 'ledger: a success seen only by another process shows the entry closed to every reader',
            run: withStore(async (store, ledger) => {
              const other = await (subject.another as NonNullable<LedgerSubject['another']>)();
              try {
                const failing = handler(store, () => {
                  throw new Error('broken here');
                }, []);
                const fixed = handler(other.store, () => {}, []);
                const event = samplePaymentPaidEvent();
                expectStatus(await send(failing, event), 500);
                expectStatus(await send(fixed, event), 200);
                const entry = await mustStory(ledger, event.paymentId);
                check(entry.state === 'closed', `state ${entry.state}`);
                check(!(await allFailing(ledger)).some((e) => e.paymentId === event.paymentId), 'still listed');
              } finally {
                await other.cleanup?.();
              }
            }),
          },
        ]),
  ];
}

function handler(store: WebhookStore, onPaymentPaid: () => void, outcomes: Outcome[]) {
  return createWebhookHandler({
    secret: SECRET,
    store,
    logger: quiet,
    onOutcome: (o) => {
      outcomes.push(o);
    },
    onPaymentPaid,
  });
}

function send(handle: ReturnType<typeof createWebhookHandler>, event: PaymentPaidEvent) {
  const { body, headers } = signWebhook({ event, secret: SECRET });
  return handle({ method: 'POST', headers, rawBody: body });
}

async function mustStory(ledger: PaymentLedger, paymentId: string): Promise<LedgerEntry> {
  const entry = await ledger.story(paymentId);
  if (entry === undefined) throw new Error(`no ledger entry for ${paymentId}`);
  return entry;
}

async function allFailing(ledger: PaymentLedger): Promise<LedgerEntry[]> {
  const all: LedgerEntry[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < 10_000; pages++) {
    const page = await ledger.failing(cursor === undefined ? { limit: 500 } : { limit: 500, cursor });
    all.push(...page.entries);
    if (page.next === undefined) return all;
    cursor = page.next;
  }
  return all;
}

function expectStatus(answer: { status: number; body: string }, status: number): void {
  check(answer.status === status, `answered ${answer.status} ${answer.body}, expected ${status}`);
}

function check(ok: boolean, what: string): void {
  if (!ok) throw new Error(`ledger case failed: ${what}`);
}
