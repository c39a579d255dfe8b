import type { PaymentLedger } from '../ledger/payment-ledger.js';
import type { StorePoolState } from '../pipeline/store-pool.js';
import type { DedupeStore } from './dedupe-store.js';
import type { DeliveryScope } from './delivery-scope.js';

/**
 * How an attempt ended, as the store records it in its inbox row.
 *
 * @example
 * ```ts
 * const record: InboxRecord = { outcome: 'credited', paymentId: 'p_1', deliveryId: 'dl_1', source: 'webhook' };
 * ```
 */
export interface InboxRecord {
  /** `credited`: the handler's writes commit with the row. `rejected`: they roll back; the row commits. */
  outcome: 'credited' | 'rejected';
  paymentId: string;
  /** `X-Service-Delivery` of the attempt; absent for reconciliation. */
  deliveryId: string | undefined;
  source: 'webhook' | 'reconciliation';
  /** Why the handler rejected the payment (`PaymentRejectedError.reason`). */
  reason?: string;
}

/**
 * What the inbox row will say about the attempt, known when its transaction opens: a store may write the
 * row with the claim itself (one statement, no late INSERT), leaving only its outcome to settle at commit.
 *
 * @example
 * ```ts
 * const draft: InboxDraft = { paymentId: 'p_1', deliveryId: 'dl_1', source: 'webhook' };
 * ```
 */
export type InboxDraft = Pick<InboxRecord, 'paymentId' | 'deliveryId' | 'source'>;

/**
 * One open transaction that holds a dedupe key. The pipeline runs the handler with `tx`, then ends the
 * transaction exactly once: `commit` or `rollback`.
 *
 * @example
 * ```ts
 * const claim = await store.begin(key, fingerprint);
 * if (claim.state === 'claimed') await claim.session.commit({ outcome: 'credited', paymentId, deliveryId, source: 'webhook' });
 * ```
 */
export interface TransactionSession<Tx> {
  /** The transaction's handle, handed to the handler as `ctx.tx`. */
  readonly tx: Tx;
  /**
   * Inserts the inbox row and commits, in the same transaction as the handler's writes. For `rejected`, the
   * handler's writes are rolled back first and only the row commits. Rejects when the commit failed or its
   * outcome is unknown; the pipeline then answers 500 and the sender's retry finds out which it was.
   */
  commit(record: InboxRecord): Promise<void>;
  /**
   * Rolls back and frees the key. Must work while the handler still uses `tx` (a deadline): a store then
   * ends the transaction by closing its connection, so nothing the late handler sends can commit.
   */
  rollback(reason: unknown): Promise<void>;
  /**
   * Optional: the delivery's scope (`openDelivery`), for a store that guards what the handler does beside
   * `tx`. The pipeline runs the handler in it (`scope.run`), runs `ctx.outsideTransaction(fn)` outside it
   * (`scope.outside`), reports its first refusal as the delivery's failure (`scope.refusal`), and hears of
   * a `ctx.tx` use after the end (`scope.onLateUse`). Without it the handler just runs.
   */
  readonly scope?: DeliveryScope;
}

/**
 * What `begin` found: the key taken (a transaction is open), another transaction holding it, or a row
 * saying it was handled before.
 *
 * @example
 * ```ts
 * const claim: TransactionClaim<PoolClient> = await store.begin(key, fingerprint);
 * ```
 */
export type TransactionClaim<Tx> =
  | { state: 'claimed'; session: TransactionSession<Tx> }
  | { state: 'in-progress'; retryAfterMs: number }
  | { state: 'completed'; fingerprint: string };

/**
 * A store that runs the handler inside its own transaction: the handler's writes (through `ctx.tx`) and the
 * dedupe record commit together or not at all. A crash, a lost connection or a deadline rolls both back and
 * frees the key at once: no lease, no expiry, nothing orphaned. `@service-pay/postgres` implements it.
 *
 * The pipeline tells the two kinds of store apart by `kind`, the one property a transactional store must
 * declare; it never asks what class a store is.
 *
 * @example
 * ```ts
 * const store: TransactionalStore<PoolClient> = new PostgresStore({ pool });
 * createWebhookHandler({ secret, store, onPaymentPaid: async (event, ctx) => {
 *   await ctx.tx.query('update orders set paid = true where order_no = $1', [event.orderNo]);
 * } });
 * ```
 */
export interface TransactionalStore<Tx> {
  readonly kind: 'transactional';
  /**
   * Optional: the operator's ledger of failing payments, in the store's own database, written outside the
   * delivery's transaction (which rolled back) in a statement of its own (see `PaymentLedger`).
   */
  readonly ledger?: PaymentLedger | undefined;
  /**
   * Opens a transaction and takes `key` without waiting: held by another transaction -> `in-progress`;
   * already recorded -> `completed` with the recorded fingerprint; else `claimed` with the open session.
   * If the caller gave up waiting (its store timeout), it rolls back a session that arrives late.
   * `draft` (given by the pipeline) is what the inbox row will say; the commit's record repeats it.
   */
  begin(key: string, fingerprint: string, draft?: InboxDraft): Promise<TransactionClaim<Tx>>;
  /**
   * Optional: the store's connection pool now (size, in use, waiting), from the pool's public counters;
   * `undefined` when it cannot tell. Asked only after `begin` did not answer within `storeTimeoutMs`, so a
   * full pool is logged as such (`StorePoolFullError`) rather than as a database that does not answer.
   */
  describePool?(): StorePoolState | undefined;
  /**
   * Optional: marks the payment's record after `ctx.tx` was used once its delivery had ended (work the
   * handler left running): that write was not made, and someone must look at the payment. Called by the
   * pipeline once per delivery (its first late call), after it logged `LATE_TX_USE` and reported the outcome `late-use`;
   * apart from any delivery's transaction. A failure is logged, never thrown anywhere else.
   *
   * @example
   * ```ts
   * async flagLateUse(late) {
   *   await pool.query("update ledger set state = 'flagged', last_error = $2 where payment_id = $1", [late.paymentId, late.message]);
   * }
   * ```
   */
  flagLateUse?(late: {
    paymentId: string;
    deliveryId: string | undefined;
    code: 'LATE_TX_USE';
    message: string;
  }): void | Promise<void>;
}

/**
 * Any store the pipeline accepts: a lease store or a transactional one.
 *
 * @example
 * ```ts
 * const store: WebhookStore = process.env.DATABASE_URL ? new PostgresStore({ pool }) : new MemoryDedupeStore();
 * ```
 */
// biome-ignore lint/suspicious/noExplicitAny: the transaction type is whatever the store says
export type WebhookStore = DedupeStore | TransactionalStore<any>;

/**
 * The transaction handle a store gives `ctx.tx`: `never` for lease stores.
 *
 * @example
 * ```ts
 * type Tx = TxOf<PostgresStore>; // PoolClient
 * ```
 */
export type TxOf<S> = S extends TransactionalStore<infer Tx> ? Tx : never;

/** Whether a store runs handlers in its transactions; the one place the pipeline looks at `kind`. */
export function isTransactional<Tx>(store: DedupeStore | TransactionalStore<Tx>): store is TransactionalStore<Tx> {
  return store.kind === 'transactional';
}
