import type { PaymentLedger } from './payment-ledger.js';

/** How many payments with an open entry a process remembers per ledger (about 100 bytes each). */
const REMEMBERED = 10_000;

const known = new WeakMap<PaymentLedger, Set<string>>();

/**
 * The payments this process saw fail (or flagged) on a ledger, so a later success closes their entry and
 * every other success sends nothing: one per ledger, shared by every handler and reconciler on the same
 * store. Bounded: past `REMEMBERED` the oldest are forgotten, and a reader still shows such an entry as
 * closed once its payment is recorded as handled.
 *
 * @example
 * ```ts
 * openEntries(store.ledger).has('p_1');
 * ```
 */
export function openEntries(ledger: PaymentLedger): Set<string> {
  let set = known.get(ledger);
  if (set === undefined) {
    set = new Set();
    known.set(ledger, set);
  }
  return set;
}

/** Remembers `paymentId` as open on `set`, forgetting the oldest past the bound. */
export function rememberOpen(set: Set<string>, paymentId: string): void {
  set.delete(paymentId);
  set.add(paymentId);
  if (set.size > REMEMBERED) set.delete(set.values().next().value as string);
}
