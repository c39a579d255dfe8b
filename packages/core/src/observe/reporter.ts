import { STATUS_BY_CODE, type WebhookErrorCode } from '../errors/error-codes.js';
import type { WebhookError } from '../errors/webhook-error.js';
import type { LedgerChange } from '../ledger/payment-ledger.js';
import type { AttemptResult } from '../pipeline/attempt.js';
import { StoreTimeoutError } from '../pipeline/store-call.js';
import { StorePoolFullError } from '../pipeline/store-pool.js';
import { FailingPayments } from './failing-payments.js';
import { safeLog, type WebhookLogger } from './logger.js';
import type { AttemptSource, Outcome, OutcomeKind } from './outcome.js';
import { RateLimiter } from './rate-limit.js';

/** What is known about the payment an outcome is about (nothing, before the signature passed). */
export interface ReportSubject {
  readonly source: AttemptSource;
  readonly startedAt: number;
  readonly paymentId?: string | undefined;
  readonly deliveryId?: string | undefined;
  /** Fields every log line about it carries (key, order number). */
  readonly logFields?: Record<string, unknown> | undefined;
}

const REFUSAL_LOG_PERIOD_MS = 10_000;

/**
 * The level each outcome of an attempt is logged at: a credit is news (info); a duplicate or a 409 is the
 * sender's normal retrying (debug); everything a person must look at (a conflict, a rejection, a failure, a
 * timeout, a store outage) is an error.
 */
const LEVEL_OF: Record<AttemptResult['outcome'], 'debug' | 'info' | 'error'> = {
  credited: 'info',
  duplicate: 'debug',
  'in-progress': 'debug',
  rejected: 'error',
  conflict: 'error',
  failed: 'error',
  timeout: 'error',
  unavailable: 'error',
};

const MESSAGES: Record<AttemptResult['outcome'], string> = {
  credited: 'Payment credited.',
  duplicate: 'Duplicate of a payment handled before; not handled again.',
  rejected: 'Payment rejected by onPaymentPaid; recorded as handled, not credited.',
  'in-progress': 'Another attempt of this payment is running; answered 409 so the sender retries later.',
  conflict:
    'ALERT: this payment was seen before with different payment fields (orderNo, tokenSymbol or amount); not handled.',
  failed: 'onPaymentPaid failed; nothing recorded, the sender will retry.',
  timeout:
    'onPaymentPaid was still running at handlerTimeoutMs: ctx.signal aborted and the attempt given up (not released: a retry after the lease runs it again).',
  unavailable: 'The store did not answer within storeTimeoutMs; answered 503 so the sender retries later.',
};

/** A transactional store's timeout: there is no lease, its transaction was rolled back (nothing credited). */
const TIMEOUT_ROLLED_BACK =
  'onPaymentPaid was still running at handlerTimeoutMs: ctx.signal aborted and its transaction rolled back (nothing credited; the sender retries).';

/**
 * Turns every outcome into one log line at its level (`LEVEL_OF`), and one call of
 * `onOutcome`. Refusals at warn (rate-limited per code: the first, then a count every 10 s, so a
 * scanner cannot flood the log with 401s, 405s or 413s), clients gone mid-body at debug (rate-limited too); credits at info; duplicates and busy answers at debug; conflicts,
 * rejections, timeouts and failures at error. A few refusals mean the merchant's setup is wrong rather than
 * the request: for those a hint with the fix is logged once (per hint), at warn. A failing handler's error,
 * stack included, is logged at a payment's first failure; each later failure of the same payment is one
 * short line, rate-limited per code like the refusals.
 */
export class Reporter {
  readonly #refusals: RateLimiter;
  readonly #retries: RateLimiter;
  readonly #failing = new FailingPayments();
  readonly #hinted = new Set<string>();

  constructor(
    private readonly logger: WebhookLogger,
    private readonly onOutcome: ((outcome: Outcome) => void | Promise<void>) | undefined,
    private readonly now: () => number,
  ) {
    this.#refusals = new RateLimiter(REFUSAL_LOG_PERIOD_MS, (code, suppressed) => {
      const fields = { code, status: STATUS_BY_CODE[code as WebhookErrorCode], suppressed };
      const period = `in the last ${REFUSAL_LOG_PERIOD_MS / 1000} s`;
      if (code === 'PROBE') {
        safeLog(
          logger,
          'debug',
          { code: 'MISSING_SIGNATURE', status: 401, probe: true, suppressed },
          `${suppressed} more reachability checks ${period}.`,
        );
      } else if (code === 'CLIENT_DISCONNECTED') {
        safeLog(
          logger,
          'debug',
          fields,
          `${suppressed} more clients went away before the body was complete ${period}.`,
        );
      } else safeLog(logger, 'warn', fields, `${suppressed} more deliveries were refused with ${code} ${period}.`);
    });
    this.#retries = new RateLimiter(REFUSAL_LOG_PERIOD_MS, (code, suppressed) => {
      safeLog(
        logger,
        'error',
        { code, status: STATUS_BY_CODE[code as WebhookErrorCode], suppressed },
        `${suppressed} more attempts of payments that had failed before failed again with ${code} in the last ${REFUSAL_LOG_PERIOD_MS / 1000} s.`,
      );
    });
  }

  /** A request refused before any payment was looked at, or acknowledged without one (another event). */
  refusal(error: WebhookError, subject: ReportSubject): void {
    const fields = { code: error.code, status: error.status };
    if (error.code === 'UNSUPPORTED_EVENT') {
      safeLog(this.logger, 'debug', fields, error.message);
      this.#emit('ignored', subject, error.code);
      return;
    }
    if (error.code === 'CLIENT_DISCONNECTED') {
      // The client went away mid-body: nothing to answer, and nothing the merchant must act on. Rate-limited
      // like the refusals: 2,000 aborted uploads made 2,000 lines.
      if (this.#refusals.admit(error.code)) safeLog(this.logger, 'debug', fields, error.message);
    } else if (error.code === 'INVALID_OPTIONS') {
      // Not the request's fault: this server is misconfigured (a broken clock), so every delivery fails.
      safeLog(this.logger, 'error', fields, `Could not check a delivery: ${error.message}`);
    } else if (subject.source !== 'webhook' || this.#refusals.admit(error.code)) {
      // Every refusal is rate-limited per code, not only 401s: 10,000 GETs from a scanner made 10,000
      // lines of 405 before. The first of each code in a window is logged, the rest counted.
      const what = subject.source === 'webhook' ? 'Refused a delivery' : 'Could not reconcile a payment';
      safeLog(this.logger, 'warn', { ...subject.logFields, ...fields }, `${what}: ${error.message}`);
    }
    this.#hintOnce(error);
    const failed = error.code === 'INVALID_OPTIONS' || error.code === 'PAYMENT_READ_FAILED';
    this.#emit(failed ? 'failed' : 'refused', subject, error.code);
  }

  /**
   * `service-pay listen`'s reachability check: an unsigned request, answered 401 as any, but logged at debug
   * (rate-limited with the refusals of its code), since nobody sent a delivery.
   */
  probe(error: WebhookError, subject: ReportSubject): void {
    if (this.#refusals.admit('PROBE'))
      safeLog(
        this.logger,
        'debug',
        { code: error.code, status: error.status, probe: true },
        `Answered a reachability check (service-pay listen) ${error.status} ${error.code}, as any unsigned request; not a delivery.`,
      );
    this.#emit('refused', subject, error.code);
  }

  /** A reconciled payment the service does not say is PAID: nothing to do yet. */
  notPaid(subject: ReportSubject, status: string): void {
    safeLog(
      this.logger,
      'debug',
      { ...subject.logFields, paymentStatus: status },
      'Payment not paid yet; nothing to reconcile.',
    );
    this.#emit('ignored', subject, undefined);
  }

  /** How an exactly-once attempt ended. */
  attempt(result: AttemptResult, subject: ReportSubject): void {
    const code = codeOf(result);
    const level = LEVEL_OF[result.outcome];
    if (subject.paymentId !== undefined) {
      if (result.outcome === 'failed') {
        const failures = this.#failing.failed(subject.paymentId);
        if (failures > 1) {
          this.#logRepeatedFailure(result, subject, failures);
          this.#emit(result.outcome, subject, code, result.handlerMs, result.ledger);
          return;
        }
      } else if (result.outcome !== 'in-progress') this.#failing.settled(subject.paymentId);
    }
    // Most deliveries are credits and duplicates, logged at info and debug: with a logger that has no such
    // level (the console default), no fields are built at all.
    if (this.logger[level] !== undefined) this.#logAttempt(result, subject, code, level);
    this.#emit(result.outcome, subject, code, 'handlerMs' in result ? result.handlerMs : undefined, result.ledger);
  }

  #logAttempt(
    result: AttemptResult,
    subject: ReportSubject,
    code: WebhookErrorCode | undefined,
    level: 'debug' | 'info' | 'error',
  ): void {
    const status = code === undefined ? 200 : STATUS_BY_CODE[code];
    const fields: Record<string, unknown> = {
      ...subject.logFields,
      ...(code === undefined ? {} : { code }),
      status,
      ...('handlerMs' in result ? { handlerMs: result.handlerMs } : {}),
      ...(subject.source === 'reconciliation' ? { source: subject.source } : {}),
    };
    switch (result.outcome) {
      case 'credited':
      case 'duplicate':
      case 'in-progress':
        safeLog(this.logger, level, fields, MESSAGES[result.outcome]);
        break;
      case 'rejected':
        safeLog(this.logger, 'error', { ...fields, reason: result.reason }, MESSAGES.rejected);
        break;
      case 'conflict':
        safeLog(this.logger, 'error', { ...fields, alert: true }, MESSAGES.conflict);
        break;
      case 'failed':
      case 'unavailable':
        safeLog(this.logger, 'error', { ...fields, err: result.error }, failureMessage(result));
        break;
      case 'timeout':
        safeLog(this.logger, level, fields, result.rolledBack === true ? TIMEOUT_ROLLED_BACK : MESSAGES.timeout);
        break;
    }
  }

  /**
   * A payment whose failure (with its stack) was logged before failed again: one short line, without the
   * stack, rate-limited per code like the refusals (the first in a window, then a count).
   */
  #logRepeatedFailure(
    result: Extract<AttemptResult, { outcome: 'failed' }>,
    subject: ReportSubject,
    failures: number,
  ): void {
    if (!this.#retries.admit(result.code)) return;
    const error = result.error;
    const said = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    safeLog(
      this.logger,
      'error',
      {
        ...subject.logFields,
        code: result.code,
        status: STATUS_BY_CODE[result.code],
        handlerMs: result.handlerMs,
        failures,
        ...(subject.source === 'reconciliation' ? { source: subject.source } : {}),
      },
      `${result.code === 'COMMIT_FAILED' ? 'The commit' : 'onPaymentPaid'} failed again (failure ${failures} of this payment here; its stack was logged at the first): ${said.replace(/\s+/g, ' ').slice(0, 200)}`,
    );
  }

  /**
   * After an attempt ended, work its handler left running used `ctx.tx`: that write was not made, and the
   * attempt may have been answered 200. At error, naming the payment, with its own code and outcome, so
   * an alert on either finds it (the delivery's own outcome was reported before).
   */
  lateUse(error: Error, subject: ReportSubject): void {
    safeLog(
      this.logger,
      'error',
      {
        ...subject.logFields,
        code: 'LATE_TX_USE',
        status: STATUS_BY_CODE.LATE_TX_USE,
        err: error,
      },
      `ctx.tx was used after the delivery of payment ${subject.paymentId ?? '(unknown)'} had ended: that write was NOT made. ` +
        'Await every ctx.tx call inside onPaymentPaid, then check this payment.',
    );
    this.#emit('late-use', subject, 'LATE_TX_USE');
  }

  /**
   * Something nobody expected broke outside `onPaymentPaid` (a bug of the library's); the answer is a 500
   * and the sender retries. Its own code, `INTERNAL_ERROR`, so metrics do not blame the merchant's handler.
   */
  unexpected(error: unknown, subject: ReportSubject): void {
    safeLog(
      this.logger,
      'error',
      { ...subject.logFields, code: 'INTERNAL_ERROR', status: 500, err: error },
      'Unexpected error in the webhook pipeline (not in onPaymentPaid); answered 500 so the sender retries.',
    );
    this.#emit('failed', subject, 'INTERNAL_ERROR');
  }

  /**
   * Logs a refusal's fix once per handler and hint, where the refusal means the setup (not the request) is
   * wrong. At warn: the delivery is retried, and a scanner's bad signatures must not page anyone.
   */
  #hintOnce(error: WebhookError): void {
    let hint: string | undefined;
    if (error.code === 'RAW_BODY_UNAVAILABLE') hint = error.message;
    else if (error.code === 'SIGNATURE_MISMATCH') hint = error.hint;
    else if (error.code === 'TIMESTAMP_OUT_OF_TOLERANCE') {
      hint =
        "A correctly signed delivery was outside the time window. If this keeps happening, this server's clock is wrong: check that it is synchronised (NTP).";
    }
    // A handful of distinct hints exist, so the set stays small.
    if (hint === undefined || this.#hinted.has(hint)) return;
    this.#hinted.add(hint);
    safeLog(this.logger, 'warn', { code: error.code, status: error.status, hint: true }, `Setup problem? ${hint}`);
  }

  #emit(
    outcome: OutcomeKind,
    subject: ReportSubject,
    code: WebhookErrorCode | undefined,
    handlerMs?: number,
    ledger?: LedgerChange,
  ): void {
    const hook = this.onOutcome;
    if (hook === undefined) return;
    const report: Outcome = {
      outcome,
      status: code === undefined ? 200 : STATUS_BY_CODE[code],
      source: subject.source,
      durationMs: this.now() - subject.startedAt,
    };
    if (code !== undefined) report.code = code;
    if (subject.paymentId !== undefined) report.paymentId = subject.paymentId;
    if (subject.deliveryId !== undefined) report.deliveryId = subject.deliveryId;
    if (handlerMs !== undefined) report.handlerMs = handlerMs;
    if (ledger !== undefined) report.ledger = ledger;
    try {
      const returned = hook(report);
      if (typeof (returned as PromiseLike<void> | undefined)?.then === 'function') {
        (returned as Promise<void>).then(undefined, (error: unknown) => this.#hookFailed(error));
      }
    } catch (error) {
      this.#hookFailed(error);
    }
  }

  #hookFailed(error: unknown): void {
    safeLog(this.logger, 'error', { err: error }, 'onOutcome threw; the answer is unchanged.');
  }
}

/** The error code of an attempt's outcome, where it has one. */
export function codeOf(result: AttemptResult): WebhookErrorCode | undefined {
  switch (result.outcome) {
    case 'in-progress':
      return 'DELIVERY_IN_PROGRESS';
    case 'conflict':
      return 'PAYLOAD_CONFLICT';
    case 'failed':
      return result.code;
    case 'timeout':
      return 'HANDLER_TIMEOUT';
    case 'unavailable':
      return 'STORE_UNAVAILABLE';
    default:
      return undefined;
  }
}

/** The HTTP status an attempt's outcome is answered with. */
export function statusOf(result: AttemptResult): number {
  const code = codeOf(result);
  return code === undefined ? 200 : STATUS_BY_CODE[code];
}

function failureMessage(result: Extract<AttemptResult, { outcome: 'failed' | 'unavailable' }>): string {
  if (result.outcome === 'unavailable') {
    // A refused connection fails at once: saying "did not answer in time" would send the merchant to look
    // at latency instead of at a server that is down or a wrong address.
    if (result.error instanceof StorePoolFullError) {
      const { size, inUse, waiting } = result.error.pool;
      return (
        `The store's connection pool was full (size ${size}, ${inUse} in use, ${waiting} waiting) for storeTimeoutMs; ` +
        'answered 503 so the sender retries later. The database itself may be fine: size the pool for the ' +
        'deliveries (and the other work) that share it, and keep onPaymentPaid from holding ctx.tx on slow work.'
      );
    }
    if (result.error instanceof StoreTimeoutError) return MESSAGES.unavailable;
    return `The store failed (${describeStoreError(result.error)}); answered 503 so the sender retries later.`;
  }
  return result.code === 'COMMIT_FAILED'
    ? 'The transaction could not be committed; nothing was credited, the sender will retry.'
    : MESSAGES.failed;
}

/** A store error in a few words: its code (ECONNREFUSED, 57P01, ...) and message, as the client gave them. */
function describeStoreError(error: unknown): string {
  if (!(error instanceof Error)) return String(error).slice(0, 200);
  const code = (error as { code?: unknown }).code;
  const message = error.message.slice(0, 200) || error.name;
  return typeof code === 'string' && code !== '' && !message.includes(code) ? `${code}: ${message}` : message;
}
