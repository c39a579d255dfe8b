import { safeLog, type WebhookLogger } from '../observe/logger.js';
import type { DedupeStore } from '../store/dedupe-store.js';
import { AttemptStoppedError } from './attempt-stopped-error.js';

/** A handler still running at this age is warned about: the sender gives up at 5 s and retries. */
export const SLOW_HANDLER_MS = 4_000;

/** One attempt whose handler is running, or whose lease is kept alive while its completion is recorded. */
export class RunningAttempt {
  /** Neighbours in the list of running attempts (see `RunningAttempts`). */
  previous: RunningAttempt | undefined = undefined;
  next: RunningAttempt | undefined = undefined;
  linked = false;
  /** The handler runs: the deadline and the slow-handler warning apply. */
  watched = true;
  warned = false;
  /** Keep the lease alive (lease stores): from the claim until the completion is recorded or given up. */
  heartbeat: boolean;
  extending = false;
  /** When the claim, or the latest extension the store confirmed, was sent: the lease lasts from then. */
  confirmedAt: number;
  extendSentAt: number;
  /** Why this attempt must stop, once it must. */
  stopReason: AttemptStoppedError | undefined = undefined;
  #controller: AbortController | undefined = undefined;
  /** Set while the pipeline waits on the handler: the deadline settles that wait. */
  onDeadline: (() => void) | undefined = undefined;

  constructor(
    readonly key: string,
    readonly token: string | undefined,
    readonly startedAt: number,
    claimSentAt: number,
    /** What log lines about it carry; built only when one is written. */
    readonly subject: { readonly logFields: Record<string, unknown> },
  ) {
    this.heartbeat = token !== undefined;
    this.confirmedAt = claimSentAt;
    this.extendSentAt = claimSentAt;
  }

  get logFields(): Record<string, unknown> {
    return this.subject.logFields;
  }

  get stopped(): boolean {
    return this.stopReason !== undefined;
  }

  /**
   * `ctx.signal`, made on first use: most handlers never read it, and an AbortController is the most
   * expensive object of a delivery (measured: about 8% of a fresh delivery's CPU with the memory store).
   */
  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.stopReason !== undefined) this.#controller.abort(this.stopReason);
    }
    return this.#controller.signal;
  }

  /** Stops the attempt: `ctx.signal` aborts (now, or when first read) with `reason`. */
  stop(reason: AttemptStoppedError): void {
    if (this.stopReason !== undefined) return;
    this.stopReason = reason;
    this.#controller?.abort(reason);
  }
}

export interface RunningAttemptsOptions {
  /** The lease store to extend leases in; `undefined` with a transactional store (no leases). */
  store: DedupeStore | undefined;
  leaseMs: number;
  handlerTimeoutMs: number;
  logger: WebhookLogger;
  /** Bounds one store call's answer by `storeTimeoutMs`. */
  bounded: <T>(pending: Promise<T>, what: string) => Promise<T>;
  now: () => number;
}

/**
 * Watches every running attempt of one handler (or reconciler) from a single interval timer: it renews each
 * lease every third of `leaseMs` (the heartbeat), warns once about a handler still running at 4 s, gives up
 * a handler at `handlerTimeoutMs`, and declares a lease lost when the store says another attempt holds it,
 * or when no extension succeeded before the lease's end by the local clock. A lost lease or a deadline
 * aborts `ctx.signal` at once.
 *
 * One timer for all, not a timer per delivery: under load, arming and clearing timers for every delivery
 * costs more than the rest of a duplicate's handling. The interval stops itself when nothing runs and never
 * keeps a process alive. Its period (at most 250 ms, finer for short leases and deadlines) is the
 * precision of every check, so a lease is declared lost one period before its end, never after it.
 *
 * Running attempts are a doubly linked list threaded through the attempts themselves: every delivery joins
 * and leaves it, and linking two pointers costs less than a Set's hashing.
 */
export class RunningAttempts {
  #first: RunningAttempt | undefined;
  #timer: ReturnType<typeof setInterval> | undefined;
  readonly tickMs: number;
  readonly #heartbeatMs: number;

  constructor(private readonly o: RunningAttemptsOptions) {
    this.tickMs = Math.max(1, Math.floor(Math.min(250, o.leaseMs / 12, o.handlerTimeoutMs / 8)));
    this.#heartbeatMs = o.leaseMs / 3;
  }

  /**
   * An attempt whose handler is about to run, not yet watched: a handler that returns synchronously is
   * never watched at all (no tick can run while it runs), which spares most in-process deliveries the
   * list and the timer.
   */
  create(
    key: string,
    token: string | undefined,
    claimSentAt: number,
    subject: { readonly logFields: Record<string, unknown> },
  ): RunningAttempt {
    return new RunningAttempt(key, token, this.o.now(), claimSentAt, subject);
  }

  /** Starts watching an attempt (deadline, warning, heartbeat); a no-op when it is already watched. */
  watch(attempt: RunningAttempt): void {
    if (attempt.linked) return;
    attempt.linked = true;
    attempt.next = this.#first;
    if (this.#first !== undefined) this.#first.previous = attempt;
    this.#first = attempt;
    if (this.#timer === undefined) {
      this.#timer = setInterval(() => this.#tick(), this.tickMs);
      (this.#timer as { unref?: () => void }).unref?.();
    }
  }

  /** `create` and `watch` in one. */
  start(
    key: string,
    token: string | undefined,
    claimSentAt: number,
    subject: { readonly logFields: Record<string, unknown> },
  ): RunningAttempt {
    const attempt = this.create(key, token, claimSentAt, subject);
    this.watch(attempt);
    return attempt;
  }

  /** Stops watching: the handler settled and nothing is left to keep alive. A no-op when already stopped. */
  finish(attempt: RunningAttempt): void {
    attempt.watched = false;
    attempt.heartbeat = false;
    if (!attempt.linked) return;
    attempt.linked = false;
    if (attempt.previous === undefined) this.#first = attempt.next;
    else attempt.previous.next = attempt.next;
    if (attempt.next !== undefined) attempt.next.previous = attempt.previous;
    attempt.previous = undefined;
    attempt.next = undefined;
  }

  /** How many attempts are watched (for tests). */
  get size(): number {
    let n = 0;
    for (let a = this.#first; a !== undefined; a = a.next) n++;
    return n;
  }

  /**
   * `ctx.confirmLease()`: a token-checked extension, now. Resolves while this attempt still holds its
   * lease; throws (and aborts the signal) when the store says another attempt may run, or cannot say.
   */
  async confirm(attempt: RunningAttempt): Promise<void> {
    if (attempt.stopReason !== undefined) throw attempt.stopReason;
    const store = this.o.store;
    // A transactional attempt's open transaction holds the payment; nothing to extend.
    if (store === undefined || attempt.token === undefined) return;
    const sentAt = this.o.now();
    let held: boolean;
    try {
      held = await this.o.bounded(store.extend(attempt.key, attempt.token as string, this.o.leaseMs), 'extend');
    } catch (error) {
      throw new AttemptStoppedError(
        'LEASE_LOST',
        `The lease on ${attempt.key} could not be confirmed (the store did not answer); another attempt may run, so do not credit.`,
        { cause: error },
      );
    }
    if (!held) {
      this.#lose(attempt, 'the store no longer holds it');
      throw attempt.stopReason;
    }
    if (sentAt > attempt.confirmedAt) attempt.confirmedAt = sentAt;
    if (attempt.stopReason !== undefined) throw attempt.stopReason;
  }

  #tick(): void {
    if (this.#first === undefined) {
      clearInterval(this.#timer);
      this.#timer = undefined;
      return;
    }
    const now = this.o.now();
    // `next` is read first: a deadline or a lost lease may unlink the attempt.
    let next: RunningAttempt | undefined = this.#first;
    while (next !== undefined) {
      const attempt: RunningAttempt = next;
      next = attempt.next;
      if (attempt.watched) this.#watch(attempt, now);
      if (attempt.heartbeat) this.#keepAlive(attempt, now);
    }
  }

  #watch(attempt: RunningAttempt, now: number): void {
    const elapsedMs = now - attempt.startedAt;
    if (elapsedMs >= this.o.handlerTimeoutMs) {
      attempt.watched = false;
      // Not released: the handler may still finish. The lease now runs out by itself, and a retry after it
      // runs the handler again.
      attempt.heartbeat = false;
      attempt.stop(
        new AttemptStoppedError(
          'HANDLER_TIMEOUT',
          `onPaymentPaid was still running after ${this.o.handlerTimeoutMs} ms (handlerTimeoutMs); the attempt was given up.`,
        ),
      );
      this.finish(attempt);
      attempt.onDeadline?.();
    } else if (!attempt.warned && elapsedMs >= SLOW_HANDLER_MS) {
      attempt.warned = true;
      safeLog(
        this.o.logger,
        'warn',
        { ...attempt.logFields, code: 'HANDLER_SLOW', elapsedMs },
        'onPaymentPaid has been running for over 4 s: the sender times out at 5 s and retries (the retry waits with 409).',
      );
    }
  }

  #keepAlive(attempt: RunningAttempt, now: number): void {
    if (now >= attempt.confirmedAt + this.o.leaseMs - this.tickMs) {
      this.#lose(attempt, 'no extension succeeded before it ran out');
    } else if (!attempt.extending && now - attempt.extendSentAt >= this.#heartbeatMs) {
      void this.#extend(attempt, now);
    }
  }

  async #extend(attempt: RunningAttempt, sentAt: number): Promise<void> {
    const store = this.o.store as DedupeStore;
    attempt.extending = true;
    attempt.extendSentAt = sentAt;
    try {
      const held = await this.o.bounded(store.extend(attempt.key, attempt.token as string, this.o.leaseMs), 'extend');
      if (!held) this.#lose(attempt, 'another attempt holds it, or it expired');
      else if (sentAt > attempt.confirmedAt) attempt.confirmedAt = sentAt;
    } catch (error) {
      // The local clock decides when this becomes a loss (see #keepAlive).
      safeLog(
        this.o.logger,
        'warn',
        { ...attempt.logFields, code: 'LEASE_EXTEND_FAILED', err: error },
        'Could not extend the lease; trying again.',
      );
    } finally {
      attempt.extending = false;
    }
  }

  #lose(attempt: RunningAttempt, why: string): void {
    const wasKept = attempt.heartbeat;
    attempt.heartbeat = false;
    const handlerRunning = attempt.watched;
    attempt.stop(
      new AttemptStoppedError(
        'LEASE_LOST',
        `The lease on ${attempt.key} was lost (${why}): another attempt may now run, so do not credit. The sender will retry.`,
      ),
    );
    if (!handlerRunning) this.finish(attempt);
    if (!wasKept) return; // already given up (a deadline, or said before): nothing new to report
    safeLog(
      this.o.logger,
      'error',
      { ...attempt.logFields, code: 'LEASE_LOST', leaseLost: why },
      handlerRunning
        ? `Lease lost while onPaymentPaid runs (${why}); ctx.signal aborted: the handler must not credit.`
        : `Lease lost while its completion was being recorded (${why}).`,
    );
  }
}
