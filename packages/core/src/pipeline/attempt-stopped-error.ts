import { brandErrorClass } from '../errors/brand.js';

/**
 * The `ctx.signal.reason` of an attempt that must stop, and what `ctx.confirmLease()` throws:
 * - `LEASE_LOST`: the store no longer holds this attempt's lease (or could not confirm it in time), so
 *   another attempt may now run the handler. Do not credit.
 * - `HANDLER_TIMEOUT`: the handler reached `handlerTimeoutMs`; the attempt was given up.
 *
 * @example
 * ```ts
 * onPaymentPaid: async (event, ctx) => {
 *   try { await ctx.confirmLease(); } catch (e) { if (e instanceof AttemptStoppedError) console.warn(e.code); throw e; }
 * }
 * ```
 */
export class AttemptStoppedError extends Error {
  override readonly name = 'AttemptStoppedError';

  constructor(
    readonly code: 'LEASE_LOST' | 'HANDLER_TIMEOUT',
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

brandErrorClass(AttemptStoppedError, 'AttemptStoppedError');
