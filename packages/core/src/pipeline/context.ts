import type { AttemptSource } from '../observe/outcome.js';

/**
 * What `onPaymentPaid` gets besides the payment, on the webhook and on the reconciliation path alike.
 * `tx` is there only with a transactional store (typed from the store: node-postgres `PoolClient` for
 * `PostgresStore({ pool })`); `TxOf` gives it.
 *
 * @example
 * ```ts
 * onPaymentPaid: async (event, ctx) => {
 *   const order = await db.orders.find(event.orderNo, { signal: ctx.signal });
 *   await ctx.confirmLease(); // throws if another attempt may now run: do not credit
 *   await db.credit(order, event.paymentId);
 * }
 * ```
 */
export type PaymentPaidContext<Tx = never> = AttemptContext & ([Tx] extends [never] ? unknown : { tx: Tx });

/**
 * The part of the context every attempt has.
 *
 * @example
 * ```ts
 * const describe = (ctx: AttemptContext) => `${ctx.source} ${ctx.deliveryId ?? '(read)'} at ${ctx.timestamp}`;
 * ```
 */
export interface AttemptContext {
  /** `X-Service-Delivery` of this attempt; `undefined` for reconciliation. */
  deliveryId: string | undefined;
  /** Unix seconds: the signed `t` of a webhook, or when a reconciliation read the payment. */
  timestamp: number;
  source: AttemptSource;
  /**
   * Aborts when this attempt must stop: its lease was lost (another attempt may now run) or it reached
   * `handlerTimeoutMs`. Pass it to your database calls, and check it before you commit.
   */
  signal: AbortSignal;
  /**
   * Re-confirms this attempt's hold on the payment with the store (a token-checked lease extension) and
   * resolves when it still holds; throws when another attempt may now run, or the store cannot say. Await it
   * right before you commit the credit. With a transactional store it only checks `signal`: the open
   * transaction itself holds the payment.
   */
  confirmLease(): Promise<void>;
  /**
   * Runs `fn` outside the delivery's transaction guard: with a transactional store, writes through the
   * app's own client are refused during a delivery (they would commit even when the delivery fails), except
   * inside `fn`, for a write that must survive the delivery on purpose (an audit row). With any other store
   * it just runs `fn`. Returns what `fn` returns.
   *
   * @example
   * ```ts
   * await ctx.outsideTransaction(() => pool.query('insert into audit (payment_id) values ($1)', [event.paymentId]));
   * ```
   */
  outsideTransaction<T>(fn: () => T): T;
}

/**
 * The context of a webhook attempt: it always has a delivery id.
 *
 * @example
 * ```ts
 * const onPaymentPaid = async (event: PaymentPaidEvent, ctx: WebhookContext) => log(ctx.deliveryId);
 * ```
 */
export type WebhookContext<Tx = never> = PaymentPaidContext<Tx> & { source: 'webhook'; deliveryId: string };

/**
 * The context of a reconciliation attempt.
 *
 * @example
 * ```ts
 * const onPaymentPaid = async (payment: PaidPayment, ctx: ReconciliationContext) => credit(payment);
 * ```
 */
export type ReconciliationContext<Tx = never> = PaymentPaidContext<Tx> & {
  source: 'reconciliation';
  deliveryId: undefined;
};
