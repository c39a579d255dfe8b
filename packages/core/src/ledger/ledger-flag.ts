import type { LedgerEntry, LedgerFlagReason, LedgerPayment } from './payment-ledger.js';

const FLAG_ERRORS: Record<LedgerFlagReason, { code: string; message: string }> = {
  'payload-conflict': {
    code: 'PAYLOAD_CONFLICT',
    message:
      'A delivery of this payment carried other fields than the ones credited; it was not handled. Compare the payment on the service with your order.',
  },
  'late-tx-use': {
    code: 'LATE_TX_USE',
    message:
      'ctx.tx was used after the delivery ended: that write was not part of the credit. Check the handler awaits every ctx.tx call.',
  },
};

/**
 * The last error a flagged entry shows: the flag's own code, and the flagger's message or, without one, what
 * the flag means and what to check. One table, so every store's ledger tells the operator the same thing.
 *
 * @example
 * ```ts
 * const { code, message } = ledgerFlagError('late-tx-use');
 * // code === 'LATE_TX_USE'
 * ```
 */
export function ledgerFlagError(reason: LedgerFlagReason, message?: string): { code: string; message: string } {
  const known = FLAG_ERRORS[reason];
  return { code: known.code, message: message ?? known.message };
}

/**
 * The entry a flag opens for a payment the ledger has not seen fail: no failed attempts, the flag's error
 * as its last, the verified fields the flagger knows. Stores that keep whole entries (memory, Redis) write it
 * as it is.
 *
 * @example
 * ```ts
 * const entry = flaggedLedgerEntry('p_1d1c1b6e71a46e544f47b06f', 'payload-conflict', { orderNo: 'order-1042' }, Date.now());
 * // entry.state === 'flagged', entry.attempts === 0
 * ```
 */
export function flaggedLedgerEntry(
  paymentId: string,
  reason: LedgerFlagReason,
  details: Partial<LedgerPayment> & { message?: string },
  at: number,
): LedgerEntry {
  return {
    paymentId,
    orderNo: details.orderNo ?? '',
    amount: details.amount ?? '',
    tokenSymbol: details.tokenSymbol ?? '',
    key: details.key ?? '',
    state: 'flagged',
    attempts: 0,
    firstFailedAt: 0,
    lastFailedAt: at,
    lastError: ledgerFlagError(reason, details.message),
    flag: reason,
  };
}
