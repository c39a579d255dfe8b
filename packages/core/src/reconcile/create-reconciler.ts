import type { WebhookErrorCode } from '../errors/error-codes.js';
import { WebhookError } from '../errors/webhook-error.js';
import { fingerprintOf } from '../event/fingerprint.js';
import type { PaidPayment } from '../event/paid-payment.js';
import { decimalRule, paymentIdRule, text, validatorOf } from '../event/payment-fields.js';
import { codeOf, Reporter, type ReportSubject } from '../observe/reporter.js';
import { type AttemptConclusion, type AttemptResult, PaymentAttempt } from '../pipeline/attempt.js';
import { AttemptEngine } from '../pipeline/attempt-engine.js';
import type { ReconciliationContext } from '../pipeline/context.js';
import { defaultDedupeKey } from '../pipeline/handler-options.js';
import { type PipelineOptions, resolvePipelineOptions } from '../pipeline/pipeline-options.js';
import type { DedupeStore } from '../store/dedupe-store.js';
import type { TxOf, WebhookStore } from '../store/transactional-store.js';

/**
 * A payment as `GET /v1/payments/:id` returns it (spec 2.2): what reconciliation needs of it. The client's
 * `Payment` fits.
 *
 * @example
 * ```ts
 * const read: ReadPayment = { paymentId: 'p_1', status: 'PAID', orderNo: 'o-1', tokenSymbol: 'USDT', amount: '12.50' };
 * ```
 */
export interface ReadPayment {
  paymentId: string;
  status: string;
  orderNo: string;
  tokenSymbol: string;
  amount: string;
}

/**
 * Options of `createReconciler`: the pipeline's (the same `store` as the webhook handler, so both share one
 * exactly-once record), how to read a payment, and the credit.
 *
 * @example
 * ```ts
 * const options: ReconcilerOptions<RedisDedupeStore> = { getPayment: client.getPayment, store, onPaymentPaid: credit };
 * ```
 */
export interface ReconcilerOptions<S extends WebhookStore = DedupeStore> extends PipelineOptions<S> {
  /** Reads a payment from the service; `createServiceClient(...).getPayment` (it retries 429/5xx). */
  getPayment: (paymentId: string) => Promise<ReadPayment>;
  /** The store the webhook handler uses. Required: a store of its own would not know what webhooks credited. */
  store: S;
  /**
   * The credit, given a `PaidPayment` built only from what the read returned. A function typed on
   * `PaidPayment` serves the webhook handler too.
   */
  onPaymentPaid: (payment: PaidPayment, ctx: ReconciliationContext<TxOf<S>>) => unknown;
  /** Default `payment.paid:<paymentId>`, the webhook handler's default; a custom key must match the handler's. */
  dedupeKey?: (payment: PaidPayment) => string;
}

/**
 * What reconciling one payment did.
 * - `credited`, `duplicate`, `rejected`, `in-progress`, `conflict`: as for a webhook (a conflict is alerted).
 * - `not-paid`: the service does not say PAID (yet); nothing was done.
 * - `failed`: the read, the store or the handler failed (see `code`); try again later.
 *
 * @example
 * ```ts
 * const outcome: ReconcileOutcome = (await reconciler.reconcile('p_1')).outcome;
 * ```
 */
export type ReconcileOutcome =
  | 'credited'
  | 'duplicate'
  | 'not-paid'
  | 'conflict'
  | 'rejected'
  | 'in-progress'
  | 'failed';

/**
 * The result of reconciling one payment.
 *
 * @example
 * ```ts
 * const { paymentId, outcome, status }: ReconcileResult = await reconciler.reconcile('p_1');
 * ```
 */
export interface ReconcileResult {
  paymentId: string;
  outcome: ReconcileOutcome;
  /** The payment's status as read (`PAID`, ...); absent when it could not be read. */
  status?: string;
  /** Why it failed or was refused, as a code. */
  code?: WebhookErrorCode;
  /** In words, for `failed`. */
  message?: string;
}

/**
 * What `reconcileMany` did: a count per outcome and every result, in the order of the ids given.
 *
 * @example
 * ```ts
 * const { counts } = await reconciler.reconcileMany(ids);
 * console.log(`${counts.credited} recovered, ${counts.failed} to try again`);
 * ```
 */
export interface ReconcileReport {
  counts: Record<ReconcileOutcome, number>;
  results: ReconcileResult[];
}

/**
 * Reads payments back from the service and credits, exactly once, those that are PAID.
 *
 * @example
 * ```ts
 * const report = await reconciler.reconcileMany(await orders.pendingPaymentIds(), { concurrency: 4 });
 * ```
 */
export interface Reconciler {
  reconcile(paymentId: string): Promise<ReconcileResult>;
  reconcileMany(paymentIds: Iterable<string>, options?: { concurrency?: number }): Promise<ReconcileReport>;
}

const readPaidFields = validatorOf({ paymentId: paymentIdRule, orderNo: text, tokenSymbol: text, amount: decimalRule });
const DEFAULT_CONCURRENCY = 4;
const MAX_CONCURRENCY = 64;

/**
 * Recovers payments whose webhooks never arrived (the service tries at most 8 times, so a merchant that is
 * down long enough loses them): it reads each payment with `GET /v1/payments/:id` and, when the service says
 * PAID, runs the same claim -> handler -> complete path as a webhook, with the same dedupe key and store and
 * `ctx.source === 'reconciliation'`. A webhook that arrives afterwards is answered duplicate, and the
 * reverse; a race between the two credits once. Never throws: every problem is a result with a code.
 *
 * @example
 * ```ts
 * import { createReconciler } from '@service-pay/core';
 *
 * const reconciler = createReconciler({ getPayment: client.getPayment, store, onPaymentPaid: credit });
 * // Every minute: the orders still pending after a minute.
 * const report = await reconciler.reconcileMany(await db.pendingPaymentIds({ olderThanMs: 60_000 }), { concurrency: 4 });
 * ```
 */
export function createReconciler<S extends WebhookStore = DedupeStore>(options: ReconcilerOptions<S>): Reconciler {
  if (options === null || typeof options !== 'object') {
    throw new WebhookError('INVALID_OPTIONS', 'createReconciler needs { getPayment, store, onPaymentPaid }.');
  }
  if (typeof options.getPayment !== 'function') {
    throw new WebhookError(
      'INVALID_OPTIONS',
      'options.getPayment must be a function (paymentId) => Promise<payment>, such as client.getPayment.',
    );
  }
  if (options.store === undefined) {
    throw new WebhookError(
      'INVALID_OPTIONS',
      "options.store is required: give the webhook handler's store, so both share one record of what was credited.",
    );
  }
  if (typeof options.onPaymentPaid !== 'function') {
    throw new WebhookError('INVALID_OPTIONS', 'options.onPaymentPaid must be a function that credits the order.');
  }
  if (options.dedupeKey !== undefined && typeof options.dedupeKey !== 'function') {
    throw new WebhookError('INVALID_OPTIONS', 'options.dedupeKey must be a function of the payment.');
  }
  const pipeline = resolvePipelineOptions(options);
  const engine = new AttemptEngine(pipeline);
  const reporter = new Reporter(pipeline.logger, pipeline.onOutcome, engine.now);
  const { getPayment, onPaymentPaid } = options;
  const dedupeKey = options.dedupeKey ?? defaultDedupeKey;

  const reconcile = async (paymentId: string): Promise<ReconcileResult> => {
    const startedAt = engine.now();
    if (!paymentIdRule.check(paymentId)) {
      const subject = { source: 'reconciliation', startedAt } as const;
      return refused(reporter, subject, String(paymentId), 'INVALID_OPTIONS', 'A payment id starts with "p_".');
    }
    const subject: ReportSubject = { source: 'reconciliation', startedAt, paymentId, logFields: { paymentId } };
    let read: ReadPayment;
    try {
      read = await getPayment(paymentId);
    } catch (error) {
      return refused(
        reporter,
        subject,
        paymentId,
        'PAYMENT_READ_FAILED',
        `Reading the payment failed: ${messageOf(error)}`,
      );
    }
    const status = (read as Partial<ReadPayment> | null)?.status;
    if (typeof status !== 'string' || read.paymentId !== paymentId) {
      return refused(
        reporter,
        subject,
        paymentId,
        'PAYMENT_READ_FAILED',
        'The read payment has no status, or another paymentId.',
      );
    }
    if (status !== 'PAID') {
      reporter.notPaid(subject, status);
      return { paymentId, outcome: 'not-paid', status };
    }
    const problems = readPaidFields.problems(read as unknown as Record<string, unknown>);
    if (problems.length > 0) {
      return refused(
        reporter,
        subject,
        paymentId,
        'PAYMENT_READ_FAILED',
        `The read payment is not usable: ${problems.join('; ')}.`,
        status,
      );
    }
    // Only what the read returned; nothing invented (no txId: the read does not carry one).
    const payment: PaidPayment = {
      paymentId: read.paymentId,
      orderNo: read.orderNo,
      tokenSymbol: read.tokenSymbol,
      amount: read.amount,
    };
    try {
      const key = dedupeKey(payment);
      if (typeof key !== 'string' || key.length === 0) throw new TypeError('options.dedupeKey returned no key.');
      const attempt = new PaymentAttempt(
        key,
        fingerprintOf(payment),
        payment,
        'reconciliation',
        undefined,
        Math.floor(Date.now() / 1000),
        onPaymentPaid,
        startedAt,
      );
      return await engine.attempt(attempt, conclusionFor(status));
    } catch (error) {
      reporter.unexpected(error, subject);
      return { paymentId, outcome: 'failed', status, code: 'HANDLER_FAILED', message: messageOf(error) };
    }
  };

  /** How an attempt becomes a result: reported, then mapped (the read status is part of the result). */
  const conclusionFor = (status: string): AttemptConclusion<ReconcileResult> => ({
    concluded: (result, attempt) => {
      reporter.attempt(result, attempt);
      return resultOf(attempt.paymentId, status, result);
    },
    lateUse: (error, attempt) => reporter.lateUse(error, attempt),
    broke: (error, attempt) => {
      reporter.unexpected(error, attempt);
      return {
        paymentId: attempt.paymentId,
        outcome: 'failed',
        status,
        code: 'HANDLER_FAILED',
        message: messageOf(error),
      };
    },
  });

  return {
    reconcile,
    async reconcileMany(paymentIds, manyOptions = {}) {
      const ids = [...paymentIds];
      const concurrency = manyOptions.concurrency ?? DEFAULT_CONCURRENCY;
      if (!Number.isSafeInteger(concurrency) || concurrency < 1 || concurrency > MAX_CONCURRENCY) {
        throw new WebhookError('INVALID_OPTIONS', `concurrency must be a whole number from 1 to ${MAX_CONCURRENCY}.`);
      }
      const results: ReconcileResult[] = new Array(ids.length);
      let next = 0;
      const worker = async () => {
        while (next < ids.length) {
          const i = next++;
          results[i] = await reconcile(ids[i] as string);
        }
      };
      await Promise.all(Array.from({ length: Math.min(concurrency, ids.length) }, worker));
      const counts: Record<ReconcileOutcome, number> = {
        credited: 0,
        duplicate: 0,
        'not-paid': 0,
        conflict: 0,
        rejected: 0,
        'in-progress': 0,
        failed: 0,
      };
      for (const r of results) counts[r.outcome]++;
      return { counts, results };
    },
  };
}

function resultOf(paymentId: string, status: string, result: AttemptResult): ReconcileResult {
  switch (result.outcome) {
    case 'credited':
    case 'duplicate':
    case 'rejected':
    case 'in-progress':
      return { paymentId, outcome: result.outcome, status };
    case 'conflict':
      return { paymentId, outcome: 'conflict', status, code: 'PAYLOAD_CONFLICT' };
    default:
      return {
        paymentId,
        outcome: 'failed',
        status,
        code: codeOf(result) as WebhookErrorCode,
        message: 'error' in result ? messageOf(result.error) : 'The handler did not finish in time.',
      };
  }
}

function refused(
  reporter: Reporter,
  subject: ReportSubject,
  paymentId: string,
  code: 'PAYMENT_READ_FAILED' | 'INVALID_OPTIONS',
  message: string,
  status?: string,
): ReconcileResult {
  reporter.refusal(new WebhookError(code, message), subject);
  return { paymentId, outcome: 'failed', code, message, ...(status === undefined ? {} : { status }) };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
