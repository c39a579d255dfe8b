import { safeLog, type WebhookLogger } from '../observe/logger.js';
import type { PaymentAttempt } from '../pipeline/attempt.js';
import { ledgerMessage } from './ledger-message.js';
import { openEntries, rememberOpen } from './open-entries.js';
import type { LedgerChange, LedgerFlagReason, PaymentLedger } from './payment-ledger.js';

/**
 * What the pipeline writes to a store's ledger, one call per outcome: a failure (after the rollback or the
 * release, in a statement of its own), a success of a payment this process saw fail, and a flag. A ledger
 * that fails to write is logged, never changes the answer. A success of a payment not known to have an
 * entry costs one `Set` lookup and no statement.
 *
 * @example
 * ```ts
 * const writer = new LedgerWriter(store.ledger, secrets, logger, (p) => p);
 * const change = await writer.failed(attempt, 'HANDLER_FAILED', error);
 * ```
 */
export class LedgerWriter {
  readonly #open: Set<string>;

  constructor(
    readonly ledger: PaymentLedger,
    private readonly secrets: readonly string[],
    private readonly logger: WebhookLogger,
    private readonly bounded: <T>(pending: Promise<T>, what: string) => Promise<T>,
  ) {
    this.#open = openEntries(ledger);
  }

  /** A verified attempt failed (handler threw or timed out, a guard refused it, its commit failed). */
  async failed(input: PaymentAttempt, code: string, error: unknown): Promise<LedgerChange | undefined> {
    const { paymentId, orderNo, amount, tokenSymbol } = input.payment;
    const errorCode = (error as { code?: unknown } | null)?.code;
    try {
      const attempts = await this.bounded(
        this.ledger.recordFailure({
          paymentId,
          orderNo,
          amount,
          tokenSymbol,
          key: input.key,
          at: Date.now(),
          source: input.source,
          // A guard's refusal carries its own code (WRITE_OUTSIDE_TRANSACTION): the more useful of the two.
          code: typeof errorCode === 'string' && /^[A-Z][A-Z_]{2,63}$/.test(errorCode) ? errorCode : code,
          message: ledgerMessage(error, this.secrets),
        }),
        'ledger',
      );
      rememberOpen(this.#open, paymentId);
      return { change: attempts <= 1 ? 'opened' : 'failed', state: 'failing', attempts };
    } catch (failure) {
      this.#writeFailed(input, failure);
      return undefined;
    }
  }

  /** Whether a success of `input` has an entry to close: a lookup, and nothing sent when false. */
  knowsOpen(input: PaymentAttempt): boolean {
    return this.#open.has(input.payment.paymentId);
  }

  /** Closes the entry of a payment this process saw fail, now credited (or its rejection recorded). */
  async succeeded(input: PaymentAttempt): Promise<LedgerChange | undefined> {
    const { paymentId } = input.payment;
    this.#open.delete(paymentId);
    try {
      const closed = await this.bounded(this.ledger.close(paymentId, input.source), 'ledger');
      return closed ? { change: 'closed', state: 'closed', closedBy: input.source } : undefined;
    } catch (failure) {
      this.#writeFailed(input, failure);
      return undefined;
    }
  }

  /** Flags the payment: its delivery conflicted with what was credited, or used `ctx.tx` too late. */
  async flagged(input: PaymentAttempt, reason: LedgerFlagReason): Promise<LedgerChange | undefined> {
    const { paymentId, orderNo, amount, tokenSymbol } = input.payment;
    try {
      await this.bounded(
        this.ledger.flag(paymentId, reason, { orderNo, amount, tokenSymbol, key: input.key, at: Date.now() }),
        'ledger',
      );
      return { change: 'flagged', state: 'flagged', flag: reason };
    } catch (failure) {
      this.#writeFailed(input, failure);
      return undefined;
    }
  }

  #writeFailed(input: PaymentAttempt, failure: unknown): void {
    safeLog(
      this.logger,
      'warn',
      { ...input.logFields, code: 'LEDGER_WRITE_FAILED', err: failure },
      "Could not write the payment's ledger entry; the delivery's answer is unchanged.",
    );
  }
}
