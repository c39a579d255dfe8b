import { safeLog } from '../observe/logger.js';
import type { DedupeStore } from '../store/dedupe-store.js';
import {
  type AttemptConclusion,
  type HandlerSettlement,
  type PaymentAttempt,
  runHandler,
  seenBefore,
} from './attempt.js';
import { HandlerContext } from './attempt-context.js';
import type { AttemptEngine } from './attempt-engine.js';
import type { RunningAttempt } from './running-attempts.js';
import { backoffMs, pause } from './store-call.js';

/**
 * One attempt with a lease store: claim the key, run the handler while its lease is kept alive, then record
 * completion. What each store fault does, so that no fault can credit twice:
 * - a claim that failed or timed out may still land: it is released in the background (token-fenced);
 * - a handler that throws gives the claim back at once, so the sender's retry can run it;
 * - a handler past `handlerTimeoutMs` is aborted and its lease left to run out (it may still finish);
 * - once the handler has resolved, its completion is recorded, and if that fails the lease is kept alive
 *   and `complete` retried until it lands: the credit happened, and a duplicate must not run it again.
 *
 * One async frame for a whole delivery (claim, handler, first completion, then `conclusion`): each
 * further frame was a measurable share of a delivery (see AttemptConclusion).
 */
export async function leaseAttempt<T>(
  engine: AttemptEngine,
  store: DedupeStore,
  input: PaymentAttempt,
  conclusion: AttemptConclusion<T>,
): Promise<T> {
  try {
    const { key, fingerprint } = input;
    const { leaseMs } = engine.o;
    const token = engine.tokens.next();
    const sentAt = engine.now();
    let claim: Awaited<ReturnType<DedupeStore['claim']>>;
    try {
      claim = await engine.bounded(store.claim(key, token, fingerprint, leaseMs), 'claim');
    } catch (error) {
      engine.releaseInBackground(store, key, token, sentAt + leaseMs, input.logFields, true);
      return engine.conclude(conclusion, { outcome: 'unavailable', error }, input);
    }
    if (claim.state !== 'claimed') return engine.conclude(conclusion, seenBefore(claim, fingerprint), input);

    const attempt = engine.running.create(key, token, sentAt, input);
    const ctx = new HandlerContext(input.deliveryId, input.timestamp, input.source, attempt, engine.confirm);
    const running = runHandler(input, ctx, attempt, engine.running);
    const settled = running instanceof Promise ? await running : running;
    const handlerMs = engine.now() - attempt.startedAt;
    if (settled.kind === 'deadline') {
      void settled.later.then((late) => finishLate(engine, store, input, attempt, late));
      return engine.conclude(conclusion, { outcome: 'timeout', handlerMs }, input);
    }
    if (settled.kind === 'threw' && !engine.isRejection(settled.error)) {
      engine.running.finish(attempt);
      await release(engine, store, input, token, sentAt);
      return engine.conclude(
        conclusion,
        { outcome: 'failed', code: 'HANDLER_FAILED', error: settled.error, handlerMs },
        input,
      );
    }
    attempt.watched = false; // the handler is done; the heartbeat goes on until the completion is recorded
    try {
      const recorded = await engine.bounded(store.complete(key, token, engine.o.retainMs, fingerprint), 'complete');
      completed(engine, input, attempt, recorded, 0);
    } catch (error) {
      completionFailed(engine, input, error, 0);
      engine.running.watch(attempt); // keep the lease alive while completion is retried
      void retryCompletion(engine, store, input, attempt);
    }
    if (settled.kind === 'threw')
      return engine.conclude(
        conclusion,
        { outcome: 'rejected', reason: rejectionReason(settled.error), handlerMs },
        input,
      );
    return engine.conclude(conclusion, { outcome: 'credited', handlerMs }, input);
  } catch (error) {
    return conclusion.broke(error, input);
  }
}

function rejectionReason(error: unknown): string {
  return String((error as { reason?: unknown }).reason);
}

async function release(
  engine: AttemptEngine,
  store: DedupeStore,
  input: PaymentAttempt,
  token: string,
  sentAt: number,
): Promise<void> {
  try {
    await engine.bounded(store.release(input.key, token), 'release');
  } catch {
    // Until it is released, the sender's retry meets 409; at worst the lease runs out by itself.
    engine.releaseInBackground(store, input.key, token, sentAt + engine.o.leaseMs, input.logFields);
  }
}

/**
 * The store answered `complete`: stop keeping the lease, and alert if another attempt held the key. The
 * completion is recorded either way, so that attempt's next `confirmLease()` fails.
 */
function completed(
  engine: AttemptEngine,
  input: PaymentAttempt,
  attempt: RunningAttempt,
  recorded: boolean,
  retries: number,
): void {
  engine.running.finish(attempt);
  if (!recorded) {
    safeLog(
      engine.o.logger,
      'error',
      { ...input.logFields, code: 'LEASE_LOST', status: 200, alert: true },
      'ALERT: onPaymentPaid ran, but another attempt held this payment (the lease was lost). Completion is recorded, so that attempt stops at its next ctx.confirmLease(); a handler that does not confirm before it commits may credit twice. Confirm right before your commit, make the credit idempotent, or use a transactional store.',
    );
  } else if (retries > 0) {
    safeLog(
      engine.o.logger,
      'warn',
      { ...input.logFields, code: 'COMPLETION_RECORDED', status: 200, retries },
      'Completion recorded after retries.',
    );
  }
}

function completionFailed(engine: AttemptEngine, input: PaymentAttempt, error: unknown, retry: number): void {
  safeLog(
    engine.o.logger,
    'error',
    { ...input.logFields, code: 'COMPLETION_FAILED', status: 200, err: error, retry },
    retry === 0
      ? 'Handled, but recording completion failed; the lease is kept alive and completion retried in the background.'
      : 'Recording completion failed again; retrying.',
  );
}

/**
 * The answer (200: the credit happened) has gone out; completion is retried with backoff while the
 * heartbeat keeps the lease alive, each failure logged, until the store records it or says another attempt
 * holds the key.
 */
async function retryCompletion(
  engine: AttemptEngine,
  store: DedupeStore,
  input: PaymentAttempt,
  attempt: RunningAttempt,
): Promise<void> {
  for (let n = 1; ; n++) {
    await pause(backoffMs(n - 1, 2_000));
    try {
      const recorded = await engine.bounded(
        store.complete(input.key, attempt.token as string, engine.o.retainMs, input.fingerprint),
        'complete',
      );
      completed(engine, input, attempt, recorded, n);
      return;
    } catch (error) {
      completionFailed(engine, input, error, n);
    }
  }
}

/** The handler finished after its deadline: record what it did, so a retry does not do it again. */
async function finishLate(
  engine: AttemptEngine,
  store: DedupeStore,
  input: PaymentAttempt,
  attempt: RunningAttempt,
  late: HandlerSettlement,
): Promise<void> {
  if (late.kind === 'threw' && !engine.isRejection(late.error)) {
    safeLog(
      engine.o.logger,
      'warn',
      { ...input.logFields, code: 'HANDLER_TIMEOUT', status: 500, err: late.error },
      'onPaymentPaid failed after its deadline.',
    );
    await release(engine, store, input, attempt.token as string, engine.now());
    return;
  }
  safeLog(
    engine.o.logger,
    'warn',
    { ...input.logFields, code: 'HANDLER_TIMEOUT', status: 500 },
    'onPaymentPaid finished after its deadline (it did not stop at ctx.signal); recording its completion.',
  );
  try {
    const recorded = await engine.bounded(
      store.complete(input.key, attempt.token as string, engine.o.retainMs, input.fingerprint),
      'complete',
    );
    completed(engine, input, attempt, recorded, 0);
  } catch (error) {
    completionFailed(engine, input, error, 0);
    void retryCompletion(engine, store, input, attempt);
  }
}
