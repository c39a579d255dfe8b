import type { PaidPayment } from '../event/paid-payment.js';
import type { LedgerChange } from '../ledger/payment-ledger.js';
import type { AttemptSource } from '../observe/outcome.js';
import type { RunningAttempt, RunningAttempts } from './running-attempts.js';

/**
 * One exactly-once attempt at a payment, whatever its source: the key and fingerprint to claim, the
 * payment to hand the handler, and what the context says about where it came from. It is also what every
 * log line and outcome about the attempt describes; its log fields are built only when something is
 * logged (one object fewer on every delivery that logs nothing).
 */
export class PaymentAttempt {
  #logFields: Record<string, unknown> | undefined;

  constructor(
    readonly key: string,
    readonly fingerprint: string,
    /** The webhook's `PaymentPaidEvent`, or the `PaidPayment` a reconciliation built from the read. */
    readonly payment: PaidPayment,
    readonly source: AttemptSource,
    readonly deliveryId: string | undefined,
    readonly timestamp: number,
    // biome-ignore lint/suspicious/noExplicitAny: the context type depends on the store
    readonly onPaymentPaid: (payment: any, ctx: any) => unknown,
    /** When the request arrived (or the reconciliation started), for `durationMs`. */
    readonly startedAt: number,
  ) {}

  get paymentId(): string {
    return this.payment.paymentId;
  }

  /** What every log line about this attempt carries. */
  get logFields(): Record<string, unknown> {
    if (this.#logFields === undefined) {
      const { key, deliveryId } = this;
      const { paymentId, orderNo } = this.payment;
      this.#logFields =
        deliveryId === undefined ? { key, paymentId, orderNo } : { key, paymentId, orderNo, deliveryId };
    }
    return this.#logFields;
  }
}

/**
 * How an attempt ended. The webhook handler turns it into an answer, the reconciler into a result; both
 * report it the same way.
 */
export type AttemptResult = (
  | { outcome: 'credited'; handlerMs: number }
  | { outcome: 'rejected'; reason: string; handlerMs: number }
  | { outcome: 'duplicate' }
  | { outcome: 'in-progress'; retryAfterMs: number }
  | { outcome: 'conflict' }
  | { outcome: 'failed'; code: 'HANDLER_FAILED' | 'COMMIT_FAILED'; error: unknown; handlerMs: number }
  /** `rolledBack`: a transactional store's attempt, whose transaction was rolled back (no lease to run out). */
  | { outcome: 'timeout'; handlerMs: number; rolledBack?: true }
  | { outcome: 'unavailable'; error: unknown }
) & {
  /** What the attempt did to the payment's ledger entry, where the store keeps a ledger. */
  ledger?: LedgerChange;
};

/**
 * What the caller makes of an attempt's end: the webhook handler an answer, the reconciler a result. Made
 * once per handler and handed to every attempt, so a delivery runs in one async frame with no closure of
 * its own (each further frame was a measurable share of a delivery).
 */
export interface AttemptConclusion<T> {
  /** The attempt ended with `result` (reported here too). */
  concluded(result: AttemptResult, attempt: PaymentAttempt): T;
  /** Something nobody expected broke inside the attempt. */
  broke(error: unknown, attempt: PaymentAttempt): T;
  /** After the attempt ended, work it left running used `ctx.tx`: reported, never answered. */
  lateUse(error: Error, attempt: PaymentAttempt): void;
}

/** What the handler did: finished, threw, or was still running at its deadline (and may finish later). */
export type HandlerSettlement =
  | { kind: 'returned' }
  | { kind: 'threw'; error: unknown }
  | { kind: 'deadline'; later: Promise<HandlerSettlement> };

export const RETURNED: HandlerSettlement = Object.freeze({ kind: 'returned' });

/**
 * Runs the handler and waits for it, or for its deadline, whichever comes first. A synchronous handler is
 * neither awaited nor watched.
 */
export function runHandler(
  input: PaymentAttempt,
  ctx: unknown,
  attempt: RunningAttempt,
  running: RunningAttempts,
): HandlerSettlement | Promise<HandlerSettlement> {
  let returned: unknown;
  try {
    returned = input.onPaymentPaid(input.payment, ctx);
  } catch (error) {
    return { kind: 'threw', error };
  }
  if (typeof (returned as PromiseLike<unknown> | null)?.then !== 'function') return RETURNED;
  // An async handler: its deadline, the slow-handler warning and the lease's heartbeat apply while it runs.
  running.watch(attempt);
  // One reaction on the handler's promise settles the wait; the deadline's `later` is made only when the
  // deadline comes (a promise fewer on every delivery, and with async hooks on each promise pays them). The
  // handler's value is read once (a thenable's `then` may run its query).
  const handled = Promise.resolve(returned);
  return new Promise<HandlerSettlement>((resolve) => {
    attempt.onDeadline = () => resolve({ kind: 'deadline', later: settlementOf(handled) });
    handled.then(
      () => resolve(RETURNED),
      (error: unknown) => resolve({ kind: 'threw', error }),
    );
  });
}

/** What the handler's promise settles as. */
function settlementOf(handled: Promise<unknown>): Promise<HandlerSettlement> {
  return handled.then(
    (): HandlerSettlement => RETURNED,
    (error: unknown): HandlerSettlement => ({ kind: 'threw', error }),
  );
}

/** The answer for a key the store has seen: a duplicate, an attempt still running, or a conflict. */
export function seenBefore(
  found:
    | { state: 'completed'; fingerprint: string }
    | { state: 'in-progress'; retryAfterMs: number; fingerprint?: string },
  fingerprint: string,
): AttemptResult {
  // A transactional store cannot see an uncommitted row's fingerprint; a lease store can, and a conflict is
  // caught even while the first attempt still runs.
  if (found.fingerprint !== undefined && found.fingerprint !== fingerprint) return { outcome: 'conflict' };
  if (found.state === 'completed') return { outcome: 'duplicate' };
  return { outcome: 'in-progress', retryAfterMs: found.retryAfterMs };
}
