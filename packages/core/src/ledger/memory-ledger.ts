import type { AttemptSource } from '../observe/outcome.js';
import { decodeLedgerCursor, encodeLedgerCursor } from './ledger-cursor.js';
import { flaggedLedgerEntry, ledgerFlagError } from './ledger-flag.js';
import {
  type LedgerCounts,
  type LedgerEntry,
  type LedgerFailure,
  type LedgerFlagReason,
  type LedgerPage,
  type LedgerPayment,
  type PaymentLedger,
  pageLimit,
} from './payment-ledger.js';

/**
 * The ledger in this process's memory: what `MemoryDedupeStore` keeps (and a store author's reference).
 * Bounded: past `maxEntries` the oldest closed entry is forgotten first, then the oldest entry. Readers
 * show an entry as closed once `handled(key)` says its payment was recorded since (by another attempt
 * than one this process saw fail).
 *
 * @example
 * ```ts
 * const ledger = new MemoryLedger({ handled: (key) => store.has(key) });
 * await ledger.recordFailure({ paymentId: 'p_1', orderNo: 'A-1', amount: '1', tokenSymbol: 'USDT', key: 'k', at: Date.now(), source: 'webhook', code: 'HANDLER_FAILED', message: 'boom' });
 * ```
 */
export class MemoryLedger implements PaymentLedger {
  readonly #entries = new Map<string, LedgerEntry>();
  readonly #max: number;
  readonly #handled: (key: string) => boolean;

  constructor(options: { maxEntries?: number; handled?: (key: string) => boolean } = {}) {
    this.#max = options.maxEntries ?? 10_000;
    this.#handled = options.handled ?? (() => false);
  }

  recordFailure(failure: LedgerFailure): Promise<number> {
    const known = this.#entries.get(failure.paymentId);
    const lastError = { code: failure.code, message: failure.message };
    if (known === undefined) {
      const { paymentId, orderNo, amount, tokenSymbol, key, at } = failure;
      this.#put({
        paymentId,
        orderNo,
        amount,
        tokenSymbol,
        key,
        state: 'failing',
        attempts: 1,
        firstFailedAt: at,
        lastFailedAt: at,
        lastError,
      });
      return Promise.resolve(1);
    }
    known.attempts += 1;
    if (known.firstFailedAt === 0) known.firstFailedAt = failure.at;
    known.lastFailedAt = failure.at;
    known.lastError = lastError;
    if (known.state === 'closed') {
      known.state = 'failing';
      delete known.closedBy;
      delete known.closedAt;
    }
    return Promise.resolve(known.attempts);
  }

  close(paymentId: string, closedBy: AttemptSource, at = Date.now()): Promise<boolean> {
    const known = this.#entries.get(paymentId);
    if (known === undefined || known.state !== 'failing') return Promise.resolve(false);
    known.state = 'closed';
    known.closedBy = closedBy;
    known.closedAt = at;
    return Promise.resolve(true);
  }

  flag(
    paymentId: string,
    reason: LedgerFlagReason,
    details: Partial<LedgerPayment> & { message?: string; at?: number } = {},
  ): Promise<void> {
    const known = this.#entries.get(paymentId);
    const at = details.at ?? Date.now();
    const lastError = ledgerFlagError(reason, details.message);
    if (known === undefined) {
      this.#put(flaggedLedgerEntry(paymentId, reason, details, at));
    } else {
      known.state = 'flagged';
      known.flag = reason;
      known.lastFailedAt = at;
      known.lastError = lastError;
    }
    return Promise.resolve();
  }

  failing(options: { limit?: number; cursor?: string } = {}): Promise<LedgerPage> {
    const limit = pageLimit(options.limit);
    const after = options.cursor === undefined ? undefined : decodeLedgerCursor(options.cursor);
    const open = [...this.#entries.values()]
      .map((e) => this.#seen(e))
      .filter((e) => e.state !== 'closed')
      .filter((e) => after === undefined || before(e, after))
      .sort((a, b) => b.lastFailedAt - a.lastFailedAt || (b.paymentId < a.paymentId ? -1 : 1));
    const entries = open.slice(0, limit);
    const last = entries[entries.length - 1];
    return Promise.resolve(
      open.length > limit && last !== undefined ? { entries, next: encodeLedgerCursor(last) } : { entries },
    );
  }

  story(paymentId: string): Promise<LedgerEntry | undefined> {
    const known = this.#entries.get(paymentId);
    return Promise.resolve(known === undefined ? undefined : this.#seen(known));
  }

  counts(): Promise<LedgerCounts> {
    const counts: LedgerCounts = { failing: 0, flagged: 0, closed: 0 };
    for (const e of this.#entries.values()) counts[this.#seen(e).state]++;
    return Promise.resolve(counts);
  }

  /** A copy of `entry`, closed if its payment was recorded as handled since it failed. */
  #seen(entry: LedgerEntry): LedgerEntry {
    const copy = { ...entry, lastError: { ...entry.lastError } };
    if (copy.state === 'failing' && copy.key !== '' && this.#handled(copy.key)) copy.state = 'closed';
    return copy;
  }

  #put(entry: LedgerEntry): void {
    this.#entries.set(entry.paymentId, entry);
    if (this.#entries.size <= this.#max) return;
    for (const [id, e] of this.#entries) {
      if (e.state === 'closed') {
        this.#entries.delete(id);
        return;
      }
    }
    this.#entries.delete(this.#entries.keys().next().value as string);
  }
}

/** Whether `entry` comes after `cursor` in the ledger's order (most recent failure first). */
export function before(entry: LedgerEntry, cursor: { lastFailedAt: number; paymentId: string }): boolean {
  return (
    entry.lastFailedAt < cursor.lastFailedAt ||
    (entry.lastFailedAt === cursor.lastFailedAt && entry.paymentId < cursor.paymentId)
  );
}
