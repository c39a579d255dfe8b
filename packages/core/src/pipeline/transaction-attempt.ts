import { safeLog } from '../observe/logger.js';
import type { InboxRecord, TransactionalStore, TransactionClaim } from '../store/transactional-store.js';
import {
  type AttemptConclusion,
  type HandlerSettlement,
  type PaymentAttempt,
  runHandler,
  seenBefore,
} from './attempt.js';
import { TransactionContext } from './attempt-context.js';
import type { AttemptEngine } from './attempt-engine.js';
import { explainStoreTimeout } from './store-pool.js';

/**
 * One attempt with a transactional store: open a transaction that holds the key, run the handler inside it
 * (`ctx.tx`), then commit the inbox row with the handler's writes. Nothing to keep alive and nothing to
 * orphan: a throw, a deadline, a crash or a lost connection rolls back both and frees the key at once.
 * - handler resolves -> row `credited` commits with its writes -> 200; the commit fails -> 500, nothing
 *   credited (or, if the commit's fate is unknown, the retry finds the row and answers duplicate);
 * - handler throws `PaymentRejectedError` -> its writes roll back, row `rejected` commits -> 200 rejected;
 * - handler throws -> rollback -> 500, the sender retries;
 * - handler past `handlerTimeoutMs` -> `ctx.signal` aborts and the transaction is rolled back now (the
 *   store closes its connection, so nothing the late handler sends can commit) -> 500.
 */
export async function transactionAttempt<Tx, T>(
  engine: AttemptEngine,
  store: TransactionalStore<Tx>,
  input: PaymentAttempt,
  conclusion: AttemptConclusion<T>,
): Promise<T> {
  try {
    let beginning: Promise<TransactionClaim<Tx>> | undefined;
    let claim: TransactionClaim<Tx>;
    try {
      beginning = store.begin(input.key, input.fingerprint, {
        paymentId: input.payment.paymentId,
        deliveryId: input.deliveryId,
        source: input.source,
      });
      claim = await engine.bounded(beginning, 'begin');
    } catch (error) {
      // A transaction that opens after we gave up holds the key for nobody: roll it back when it arrives. A
      // rollback that fails then is nobody's to answer (the store's own expiry frees the key): it must not
      // reach the process as an unhandled rejection, which ends a Node process.
      beginning
        ?.then(
          (late) => (late.state === 'claimed' ? late.session.rollback(error) : undefined),
          () => {},
        )
        .catch(() => {});
      return engine.conclude(conclusion, { outcome: 'unavailable', error: explainStoreTimeout(error, store) }, input);
    }
    if (claim.state !== 'claimed') return engine.conclude(conclusion, seenBefore(claim, input.fingerprint), input);

    const { session } = claim;
    const { scope } = session;
    scope?.onLateUse((error) => lateUse(engine, store, conclusion, input, error));
    const attempt = engine.running.create(input.key, undefined, engine.now(), input);
    const ctx = new TransactionContext(
      input.deliveryId,
      input.timestamp,
      input.source,
      attempt,
      engine.confirm,
      session.tx,
      scope,
    );
    const settled = await (scope === undefined
      ? runHandler(input, ctx, attempt, engine.running)
      : scope.run(() => settlement(runHandler(input, ctx, attempt, engine.running))));
    engine.running.finish(attempt);
    const handlerMs = engine.now() - attempt.startedAt;

    if (settled.kind === 'deadline') {
      scope?.runsUntil(settled.later);
      await rollback(engine, session.rollback.bind(session), attempt.stopReason, input);
      void settled.later.then(() =>
        safeLog(
          engine.o.logger,
          'warn',
          { ...input.logFields, code: 'HANDLER_TIMEOUT', status: 500 },
          'onPaymentPaid finished after its deadline; its transaction had been rolled back.',
        ),
      );
      return engine.conclude(conclusion, { outcome: 'timeout', handlerMs, rolledBack: true }, input);
    }
    if (settled.kind === 'threw' && !engine.isRejection(settled.error)) {
      // Rolled back with the handler's error first: a store may read a refusal into it there (a driver's
      // error that reveals a write beside ctx.tx). A guard's refusal is then the cause, whatever the client
      // wrapped it in on its way to the handler.
      await rollback(engine, session.rollback.bind(session), settled.error, input);
      const error = scope?.refusal ?? settled.error;
      return engine.conclude(conclusion, { outcome: 'failed', code: 'HANDLER_FAILED', error, handlerMs }, input);
    }
    const rejected = settled.kind === 'threw';
    const record: InboxRecord = {
      outcome: rejected ? 'rejected' : 'credited',
      paymentId: input.payment.paymentId,
      deliveryId: input.deliveryId,
      source: input.source,
      ...(rejected ? { reason: String((settled.error as { reason?: unknown }).reason) } : {}),
    };
    try {
      await engine.bounded(session.commit(record), 'commit');
    } catch (error) {
      // Unknown or failed: make sure the transaction is over, and let the sender's retry find out which.
      await rollback(engine, session.rollback.bind(session), error, input);
      // A guard's refusal found at commit (caught or never awaited by the handler, or a query it did not
      // await) is the handler's failure, not the database's: logged as such, with the refusal as its error.
      const refused = scope?.refusal;
      if (refused !== undefined && refused === error) {
        return engine.conclude(conclusion, { outcome: 'failed', code: 'HANDLER_FAILED', error, handlerMs }, input);
      }
      return engine.conclude(conclusion, { outcome: 'failed', code: 'COMMIT_FAILED', error, handlerMs }, input);
    }
    return engine.conclude(
      conclusion,
      rejected
        ? { outcome: 'rejected', reason: record.reason as string, handlerMs }
        : { outcome: 'credited', handlerMs },
      input,
    );
  } catch (error) {
    return conclusion.broke(error, input);
  }
}

/**
 * The handler's settlement as the promise a session's `run` returns, without an `async` wrapper (whose
 * promise, resolved with another, costs two more microtask turns per delivery).
 */
function settlement(settled: HandlerSettlement | Promise<HandlerSettlement>): Promise<HandlerSettlement> {
  return settled instanceof Promise ? settled : Promise.resolve(settled);
}

/**
 * `ctx.tx` used after the attempt ended: logged at error naming the payment (`LATE_TX_USE`), reported as
 * the outcome `late-use`, and handed to the store's `flagLateUse` for the payment's record. None of it may
 * throw into the late caller.
 */
function lateUse<T>(
  engine: AttemptEngine,
  store: TransactionalStore<unknown>,
  conclusion: AttemptConclusion<T>,
  input: PaymentAttempt,
  error: Error,
): void {
  conclusion.lateUse(error, input);
  // The ledger's flag puts the payment in front of the operator; the writer logs its own failures.
  void engine.ledger?.flagged(input, 'late-tx-use');
  if (store.flagLateUse === undefined) return;
  const flagged = async () =>
    store.flagLateUse?.({
      paymentId: input.payment.paymentId,
      deliveryId: input.deliveryId,
      code: 'LATE_TX_USE',
      message: error.message,
    });
  flagged().catch((failure: unknown) =>
    safeLog(
      engine.o.logger,
      'error',
      { ...input.logFields, code: 'LATE_TX_USE', err: failure },
      "The store could not flag the payment's record after a late ctx.tx use; check this payment by hand.",
    ),
  );
}

async function rollback(
  engine: AttemptEngine,
  rollbackSession: (reason: unknown) => Promise<void>,
  reason: unknown,
  input: PaymentAttempt,
): Promise<void> {
  try {
    await engine.bounded(rollbackSession(reason), 'rollback');
  } catch (error) {
    // The store closes the connection on a failed rollback; the database then rolls back by itself.
    safeLog(
      engine.o.logger,
      'warn',
      { ...input.logFields, code: 'ROLLBACK_FAILED', err: error },
      'Rolling back the transaction failed.',
    );
  }
}
