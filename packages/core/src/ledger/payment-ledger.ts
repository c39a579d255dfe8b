import type { AttemptSource } from '../observe/outcome.js';

/**
 * Where a payment stands in the operator's ledger.
 * - `failing`: verified deliveries of it failed and none has succeeded yet: nothing credited it.
 * - `flagged`: handled, but something needs a look (a late `ctx.tx` write, a payload conflict).
 * - `closed`: a later delivery or a reconciliation credited it (or recorded its rejection).
 *
 * @example
 * ```ts
 * const state: LedgerState = 'failing';
 * ```
 */
export type LedgerState = 'failing' | 'flagged' | 'closed';

/**
 * Why a payment was flagged: `ctx.tx` used after its delivery ended, or a delivery whose signed fields
 * differ from what was credited.
 *
 * @example
 * ```ts
 * await store.ledger?.flag('p_1', 'payload-conflict');
 * ```
 */
export type LedgerFlagReason = 'late-tx-use' | 'payload-conflict';

/**
 * The verified fields of a payment that an entry names, and the dedupe key its deliveries claim (how a
 * store tells whether the payment has been credited since).
 *
 * @example
 * ```ts
 * const payment: LedgerPayment = { paymentId: 'p_1', orderNo: 'A-1', amount: '10.5', tokenSymbol: 'USDT', key: 'payment.paid:p_1' };
 * ```
 */
export interface LedgerPayment {
  paymentId: string;
  orderNo: string;
  amount: string;
  tokenSymbol: string;
  /** The dedupe key its deliveries claim (`payment.paid:<paymentId>` by default). */
  key: string;
}

/**
 * One failed attempt, as the pipeline hands it to `recordFailure`: the payment, when, and why (the
 * message already bounded and cleaned of the handler's secrets by the pipeline).
 *
 * @example
 * ```ts
 * await store.ledger.recordFailure({ ...payment, at: Date.now(), source: 'webhook', code: 'HANDLER_FAILED', message: 'column "paid_at" does not exist' });
 * ```
 */
export interface LedgerFailure extends LedgerPayment {
  /** Milliseconds since 1970. */
  at: number;
  source: AttemptSource;
  code: string;
  message: string;
}

/**
 * One payment's entry, as every store's reader answers it.
 *
 * @example
 * ```ts
 * const entry: LedgerEntry | undefined = await store.ledger.story('p_1');
 * if (entry?.state === 'failing') console.log(entry.attempts, entry.lastError.message);
 * ```
 */
export interface LedgerEntry {
  paymentId: string;
  orderNo: string;
  amount: string;
  tokenSymbol: string;
  /** The dedupe key its deliveries claim. */
  key: string;
  state: LedgerState;
  /** How many verified attempts failed. */
  attempts: number;
  /** Milliseconds since 1970 (0 for an entry that was only flagged). */
  firstFailedAt: number;
  lastFailedAt: number;
  lastError: { code: string; message: string };
  /** Why it was flagged, for `flagged`. */
  flag?: LedgerFlagReason;
  /** What closed it, for `closed` (absent when the store only saw that the payment was credited since). */
  closedBy?: AttemptSource;
  /** When it was closed, where the store knows. */
  closedAt?: number;
}

/**
 * A page of entries and the cursor of the next (absent on the last page).
 *
 * @example
 * ```ts
 * let page: LedgerPage = await store.ledger.failing({ limit: 50 });
 * while (page.next) page = await store.ledger.failing({ limit: 50, cursor: page.next });
 * ```
 */
export interface LedgerPage {
  entries: LedgerEntry[];
  next?: string;
}

/**
 * How many entries are in each state.
 *
 * @example
 * ```ts
 * const { failing }: LedgerCounts = await store.ledger.counts();
 * ```
 */
export interface LedgerCounts {
  failing: number;
  flagged: number;
  closed: number;
}

/**
 * The operator's ledger of a store: the payments whose verified deliveries failed, kept in the store's own
 * database apart from the delivery's transaction (which rolled back), and read by the CLI and the operator
 * page. An optional capability: a store that has `ledger` gets its failures recorded; one without is
 * handled as before. The pipeline writes it; operators read it.
 *
 * Writes happen only on paths that already failed (one statement each); a success closes an entry only
 * when this process knows the payment had one (`close`), and a reader treats an entry whose payment has
 * since been recorded as handled as closed, so success paths send nothing more.
 *
 * @example
 * ```ts
 * const page = await store.ledger.failing({ limit: 20 });
 * for (const e of page.entries) console.log(e.paymentId, e.attempts, e.lastError.code, e.lastError.message);
 * ```
 */
export interface PaymentLedger {
  /** Opens the payment's entry, or counts one more failed attempt on it; resolves with its attempts. */
  recordFailure(failure: LedgerFailure): Promise<number>;
  /** Closes the payment's entry if it is open (`failing`); true when one was closed. */
  close(paymentId: string, closedBy: AttemptSource, at?: number): Promise<boolean>;
  /** Flags the payment (its entry made if it has none, with `payment`'s fields where given). */
  flag(
    paymentId: string,
    reason: LedgerFlagReason,
    details?: Partial<LedgerPayment> & { message?: string; at?: number },
  ): Promise<void>;
  /** The failing and flagged entries, the most recent failure first, `limit` (default 50, at most 500) a page. */
  failing(options?: { limit?: number; cursor?: string }): Promise<LedgerPage>;
  /** One payment's entry, whatever its state; undefined when none was ever made. */
  story(paymentId: string): Promise<LedgerEntry | undefined>;
  /** How many entries are in each state. */
  counts(): Promise<LedgerCounts>;
}

/**
 * What happened to a payment's entry during one attempt, reported to `onOutcome` (`outcome.ledger`) so an
 * operator can alert on "a paid order has failed N times" without reading logs.
 *
 * @example
 * ```ts
 * onOutcome: (o) => { if (o.ledger?.change === 'opened') pager.notify(o.paymentId); }
 * ```
 */
export interface LedgerChange {
  /** `opened`: the first failure; `failed`: another; `closed`: credited since; `flagged`: needs a look. */
  change: 'opened' | 'failed' | 'closed' | 'flagged';
  state: LedgerState;
  /** Failed attempts so far (for `opened` and `failed`). */
  attempts?: number;
  closedBy?: AttemptSource;
  flag?: LedgerFlagReason;
}

/**
 * A store's ledger, if it has one: a property the store declares, never a question of what the store is.
 *
 * @example
 * ```ts
 * const ledger = ledgerOf(store); // PaymentLedger | undefined
 * ```
 */
export function ledgerOf(store: unknown): PaymentLedger | undefined {
  const ledger = (store as { ledger?: unknown } | null)?.ledger;
  return typeof ledger === 'object' && ledger !== null && typeof (ledger as PaymentLedger).recordFailure === 'function'
    ? (ledger as PaymentLedger)
    : undefined;
}

/** The page size a reader uses: `limit` as a whole number between 1 and 500, 50 when not given. */
export function pageLimit(limit: unknown): number {
  if (limit === undefined) return 50;
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1) {
    throw new TypeError(`ledger: limit must be a whole number of at least 1, got ${String(limit)}.`);
  }
  return Math.min(limit, 500);
}
