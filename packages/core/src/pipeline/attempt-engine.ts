import { PaymentRejectedError } from '../errors/payment-rejected-error.js';
import { LedgerWriter } from '../ledger/ledger-writer.js';
import { ledgerOf } from '../ledger/payment-ledger.js';
import { safeLog } from '../observe/logger.js';
import type { DedupeStore } from '../store/dedupe-store.js';
import { isTransactional } from '../store/transactional-store.js';
import { elapsedClock } from '../util/elapsed-clock.js';
import type { AttemptConclusion, AttemptResult, PaymentAttempt } from './attempt.js';
import { ClaimTokens } from './claim-token.js';
import { leaseAttempt } from './lease-attempt.js';
import type { ResolvedPipelineOptions } from './pipeline-options.js';
import { type RunningAttempt, RunningAttempts } from './running-attempts.js';
import { backoffMs, pause, StoreDeadlines } from './store-call.js';
import { transactionAttempt } from './transaction-attempt.js';

/**
 * What one handler (or reconciler) shares between its attempts: the options, the claim tokens, the watch
 * over running attempts, and the store calls with their one bound. Webhooks and reconciliations of the same
 * payment go through `attempt`, so they share one exactly-once path.
 */
export class AttemptEngine {
  readonly tokens = new ClaimTokens();
  readonly running: RunningAttempts;
  /**
   * Milliseconds since this engine first read the clock (`elapsedClock`): every time the pipeline keeps (an attempt's start, a lease's
   * last confirmation) is compared only with another from the same clock. Small numbers stay V8 small
   * integers; a `Date.now()` kept in an object is a boxed number allocated on every write, and a delivery
   * keeps several (the clock passes 2^31 ms after 24 days; it stays correct, only boxed again).
   */
  readonly now: () => number;

  /** The store's ledger, where it keeps one (`store.ledger`), and what the pipeline writes to it. */
  readonly ledger: LedgerWriter | undefined;

  /** `secrets`: the webhook secrets, kept out of the ledger's error messages. */
  constructor(
    readonly o: ResolvedPipelineOptions,
    secrets: readonly unknown[] = [],
  ) {
    this.now = elapsedClock(Date.now);
    const ledger = ledgerOf(o.store);
    this.ledger =
      ledger === undefined
        ? undefined
        : new LedgerWriter(
            ledger,
            secrets.filter((s): s is string => typeof s === 'string'),
            o.logger,
            (pending, what) => this.bounded(pending, what),
          );
    this.#inProcess = !isTransactional(o.store) && o.store.inProcess === true;
    this.#deadlines = new StoreDeadlines(o.storeTimeoutMs, this.now);
    this.running = new RunningAttempts({
      store: isTransactional(o.store) ? undefined : o.store,
      leaseMs: o.leaseMs,
      handlerTimeoutMs: o.handlerTimeoutMs,
      logger: o.logger,
      bounded: (pending, what) => this.bounded(pending, what),
      now: this.now,
    });
  }

  /**
   * `ctx.confirmLease()`: with a lease store, a token-checked extension (see RunningAttempts.confirm); with
   * a transactional store, the open transaction holds the payment, so it only checks that the attempt was
   * not stopped (a deadline).
   */
  readonly confirm = (attempt: RunningAttempt): Promise<void> => this.running.confirm(attempt);

  /**
   * Claim, run the handler, record: the exactly-once part of a webhook or a reconciliation, ended with
   * `conclusion` (the caller's answer or result, made once per handler).
   */
  attempt<T>(input: PaymentAttempt, conclusion: AttemptConclusion<T>): Promise<T> {
    const { store } = this.o;
    return isTransactional(store)
      ? transactionAttempt(this, store, input, conclusion)
      : leaseAttempt(this, store, input, conclusion);
  }

  /**
   * `conclusion` of `result`, once the store's ledger has it: a failure, a conflict, or a success of a
   * payment this process saw fail is written first (after the rollback or release: the entry must outlive
   * the attempt). Every other result is concluded at once, with nothing sent and no promise made.
   */
  conclude<T>(conclusion: AttemptConclusion<T>, result: AttemptResult, input: PaymentAttempt): T | Promise<T> {
    const writer = this.ledger;
    if (writer === undefined) return conclusion.concluded(result, input);
    let change: Promise<AttemptResult['ledger']>;
    switch (result.outcome) {
      case 'credited':
      case 'rejected':
      case 'duplicate':
        if (!writer.knowsOpen(input)) return conclusion.concluded(result, input);
        change = writer.succeeded(input);
        break;
      case 'failed':
        change = writer.failed(input, result.code, result.error);
        break;
      case 'timeout':
        change = writer.failed(input, 'HANDLER_TIMEOUT', 'onPaymentPaid was still running at handlerTimeoutMs.');
        break;
      case 'conflict':
        change = writer.flagged(input, 'payload-conflict');
        break;
      default:
        return conclusion.concluded(result, input);
    }
    return change.then((ledger) => conclusion.concluded(ledger === undefined ? result : { ...result, ledger }, input));
  }

  /**
   * A store call's answer, bounded by `storeTimeoutMs`, the pipeline's only store timeout. A store that
   * answers in-process (it says so) is not bounded: the timer would cost more than the call itself.
   */
  bounded<T>(pending: Promise<T>, what: string): Promise<T> {
    return this.#inProcess ? pending : this.#deadlines.bound(pending, what);
  }

  readonly #inProcess: boolean;
  readonly #deadlines: StoreDeadlines;

  /**
   * Gives a lease back, retrying in the background with backoff until the store answers or `untilMs` has
   * passed (by then the lease has run out by itself). Used after a claim whose outcome is unknown (it may
   * land later) and after a handler failure, so a retry is not held off by a lease nobody runs.
   */
  releaseInBackground(
    store: DedupeStore,
    key: string,
    token: string,
    untilMs: number,
    logFields: object,
    afterFailedClaim = false,
  ): void {
    void (async () => {
      for (let n = 0; this.now() < untilMs; n++) {
        try {
          await this.bounded(store.release(key, token), 'release');
          return;
        } catch (error) {
          // After a failed claim the 503 was already logged as STORE_UNAVAILABLE, and the claim most often
          // never reached the store: a warning per 503 would double the noise of an outage for nothing.
          if (n === 0)
            safeLog(
              this.o.logger,
              afterFailedClaim ? 'debug' : 'warn',
              { ...logFields, code: 'RELEASE_FAILED', err: error },
              'Could not release the claim yet; retrying until the lease runs out.',
            );
        }
        await pause(backoffMs(n, 1_000));
      }
    })();
  }

  /** Whether an error thrown by the handler is a permanent rejection of the payment. */
  isRejection(error: unknown): error is PaymentRejectedError {
    return error instanceof PaymentRejectedError;
  }
}
