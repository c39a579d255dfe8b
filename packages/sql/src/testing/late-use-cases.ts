import {
  createWebhookHandler,
  type Outcome,
  type PaymentPaidEvent,
  signWebhook,
  type TransactionalStore,
  type WebhookRequest,
} from '@service-pay/core';
import { samplePaymentPaidEvent } from '@service-pay/core/testing';

/** What the late-use cases need of a client: a store, the credit through `ctx.tx`, and its count. */
export interface LateUseSubject<Tx> {
  /** A store on the app's client. */
  store(): TransactionalStore<Tx>;
  /** The credit through `ctx.tx`, awaited. */
  write(tx: Tx, marker: string): Promise<unknown>;
  /** How many credits `marker` has, read outside any delivery. */
  count(marker: string): Promise<number>;
}

/** One case: a name and its body, to run with the test runner's `it`. */
export interface LateUseCase {
  name: string;
  run: () => Promise<void>;
}

const SECRET = 'whsec_late_use_cases_0123456789abcdef';
let deliveries = 0;

function delivery(event: PaymentPaidEvent): WebhookRequest {
  deliveries += 1;
  const { body, headers } = signWebhook({ event, secret: SECRET, deliveryId: `dl_late_${deliveries}` });
  return { method: 'POST', headers, rawBody: body };
}

/** `promise`, or a clear failure after `ms`: the case must not wait for the runner's own timeout. */
async function within(promise: Promise<void>, ms: number, what: string): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`expected ${what} within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

function expect(condition: boolean, what: string): void {
  if (!condition) throw new Error(`expected ${what}`);
}

/**
 * The late-use cases for one client: a `ctx.tx` write made after the delivery ended, by a helper the
 * handler started and did not await (`void creditOrder(ctx.tx, event)`, where `creditOrder` awaits
 * something first). The store can no longer count it, so it must be loud: an error log `LATE_TX_USE`
 * naming the payment, the outcome `late-use`, the store's `flagLateUse` (when it has one), no credit, and
 * no unhandled rejection (a plain Node app would exit on one).
 *
 * @example
 * ```ts
 * for (const c of lateUseCases(subject)) it(c.name, c.run);
 * ```
 */
export function lateUseCases<Tx>(subject: LateUseSubject<Tx>): LateUseCase[] {
  return [
    {
      name: 'a ctx.tx write after the handler returned (void creditOrder that awaits first) is loud: LATE_TX_USE naming the payment, the outcome late-use, no credit, no unhandled rejection',
      run: async () => {
        const event = samplePaymentPaidEvent();
        const unhandled: unknown[] = [];
        const note = (reason: unknown) => void unhandled.push(reason);
        const logged: Array<{ fields: Record<string, unknown>; message: string }> = [];
        const outcomes: Outcome[] = [];
        let answered: () => void = () => {};
        const credited = new Promise<void>((resolve) => (answered = resolve));
        let reported: () => void = () => {};
        const lateUse = new Promise<void>((resolve) => (reported = resolve));
        let afterTheWrite = false;
        const creditOrder = async (tx: Tx, paymentId: string) => {
          // Something awaited first: by the time the credit is sent, the delivery has been answered.
          await credited;
          await subject.write(tx, paymentId);
          afterTheWrite = true;
        };
        const store = subject.store();
        const flagged: Array<{ paymentId: string }> = [];
        const handle = createWebhookHandler({
          secret: SECRET,
          // The store as the operator's ledger extends it: told of the late use, for the payment's record.
          store: {
            kind: 'transactional',
            begin: (key, fingerprint, draft) => store.begin(key, fingerprint, draft),
            flagLateUse: (flag) => void flagged.push(flag),
          } satisfies TransactionalStore<Tx>,
          logger: {
            warn: () => {},
            error: (fields, message) => void logged.push({ fields, message }),
          },
          onOutcome: (outcome) => {
            outcomes.push(outcome);
            if (outcome.outcome === 'credited') answered();
            if (outcome.outcome === 'late-use') reported();
          },
          onPaymentPaid: async (paid, ctx) => {
            void creditOrder((ctx as unknown as { tx: Tx }).tx, paid.paymentId);
          },
        });
        process.on('unhandledRejection', note);
        try {
          expect((await handle(delivery(event))).status === 200, 'the delivery itself to be answered 200');
          await within(lateUse, 10_000, 'the late write to be reported (the outcome late-use)');
          // A full turn, for Node to report a rejection nobody handled.
          await new Promise((resolve) => setImmediate(resolve));
        } finally {
          process.off('unhandledRejection', note);
        }
        expect(unhandled.length === 0, `no unhandled rejection, got ${String(unhandled[0])}`);
        const late = outcomes.find((outcome) => outcome.outcome === 'late-use');
        expect(late?.code === 'LATE_TX_USE' && late.paymentId === event.paymentId, 'the outcome to name the payment');
        const line = logged.find((entry) => entry.fields.code === 'LATE_TX_USE');
        expect(line?.fields.paymentId === event.paymentId, 'the error log to name the payment');
        expect(/NOT made/.test(line?.message ?? ''), 'the error log to say the write was not made');
        expect(flagged.length === 1 && flagged[0]?.paymentId === event.paymentId, 'flagLateUse to name the payment');
        expect(!afterTheWrite, 'the code after the late write not to run (it assumes the write was made)');
        expect((await subject.count(event.paymentId)) === 0, 'no credit from the late write');
      },
    },
  ];
}
