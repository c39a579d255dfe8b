import type { WebhookErrorCode } from '../errors/error-codes.js';
import type { LedgerChange } from '../ledger/payment-ledger.js';

/**
 * What happened to one request or one reconciled payment.
 * - `credited`: the handler ran and its completion was recorded (or is being recorded).
 * - `duplicate`: handled before, with the same payment fields; the handler was not run.
 * - `rejected`: the handler threw `PaymentRejectedError`; recorded so it is never retried.
 * - `ignored`: authentic, but nothing to do (another event type; a reconciled payment not yet PAID).
 * - `in-progress`: another attempt holds the payment; the sender retries (409).
 * - `conflict`: seen before with different payment fields; not handled, alerted (422).
 * - `refused`: the request was refused before any payment was looked at (401, 400, 405, 413, 415, ...).
 * - `failed`: the handler threw, a commit failed, or something unexpected broke (500).
 * - `timeout`: the handler was still running at `handlerTimeoutMs` (500).
 * - `unavailable`: the store failed or did not answer within `storeTimeoutMs` (503).
 * - `late-use`: after a delivery had ended, work it left running used `ctx.tx`; that write was not made
 *   (code `LATE_TX_USE`, status 500 though the delivery's own answer went before). Reported besides the
 *   delivery's own outcome, once per delivery: look at the payment.
 *
 * @example
 * ```ts
 * const kind: OutcomeKind = 'credited';
 * ```
 */
export type OutcomeKind =
  | 'credited'
  | 'duplicate'
  | 'rejected'
  | 'ignored'
  | 'in-progress'
  | 'conflict'
  | 'refused'
  | 'failed'
  | 'timeout'
  | 'unavailable'
  | 'late-use';

/**
 * Where an attempt came from: a `payment.paid` webhook, or a reconciliation that read the payment.
 *
 * @example
 * ```ts
 * const source: AttemptSource = ctx.source;
 * ```
 */
export type AttemptSource = 'webhook' | 'reconciliation';

/**
 * What `onOutcome` receives: once per request, and once per reconciled payment.
 *
 * @example
 * ```ts
 * createWebhookHandler({
 *   secret, onPaymentPaid,
 *   onOutcome: (o) => metrics.increment('webhooks', { outcome: o.outcome, code: o.code ?? 'none' }),
 * });
 * ```
 */
export interface Outcome {
  outcome: OutcomeKind;
  /** The HTTP status answered (for reconciliation: the status a webhook would have been answered). */
  status: number;
  /** The error code, for every outcome that has one. */
  code?: WebhookErrorCode;
  /** Set only once the signature passed (webhook) or the payment was read (reconciliation). */
  paymentId?: string;
  deliveryId?: string;
  source: AttemptSource;
  /** From the request's arrival (or the start of the reconciliation) to its answer. */
  durationMs: number;
  /** How long `onPaymentPaid` ran, when it ran. */
  handlerMs?: number;
  /**
   * What this attempt did to the payment's entry in the store's ledger (opened, one more failure, closed,
   * flagged), where the store keeps one: alert on `ledger.attempts` without reading logs.
   */
  ledger?: LedgerChange;
}
