/**
 * Where a page of the ledger ends: the last entry's failure time and payment id, the order every store
 * pages in (most recent failure first, then payment id, descending).
 *
 * @example
 * ```ts
 * const cursor = encodeLedgerCursor({ lastFailedAt: 1767225600000, paymentId: 'p_1' }); // '1767225600000~p_1'
 * decodeLedgerCursor(cursor); // { lastFailedAt: 1767225600000, paymentId: 'p_1' }
 * ```
 */
export interface LedgerCursor {
  lastFailedAt: number;
  paymentId: string;
}

/** A cursor as the opaque text a page hands back. */
export function encodeLedgerCursor(cursor: LedgerCursor): string {
  return `${cursor.lastFailedAt}~${cursor.paymentId}`;
}

/** A cursor back from its text; a TypeError for text no page made. */
export function decodeLedgerCursor(text: unknown): LedgerCursor {
  const match = typeof text === 'string' ? /^(\d{1,16})~(p_[\x21-\x7e]{1,200})$/.exec(text) : null;
  if (match === null) throw new TypeError('ledger: cursor is not one a page of the ledger gave.');
  return { lastFailedAt: Number(match[1]), paymentId: match[2] as string };
}
