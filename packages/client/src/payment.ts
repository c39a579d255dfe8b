/**
 * What `createPayment` sends: the fields of spec 2.1. `amount` is a decimal string in token units, never a
 * JSON number, so no amount is ever rounded by floating point.
 *
 * @example
 * ```ts
 * const input: CreatePaymentInput = {
 *   orderNo: 'order-42',
 *   tokenSymbol: 'USDT',
 *   amount: '12.50',
 *   expireSec: 900,
 *   notifyUrl: 'https://shop.example/webhooks/service',
 * };
 * ```
 */
export interface CreatePaymentInput {
  /** Your order number. */
  orderNo: string;
  /** Symbol of the token the payment is made in, such as `USDT`. */
  tokenSymbol: string;
  /** Decimal amount in token units, such as `"12.50"`. */
  amount: string;
  /** Lifetime of the payment in seconds. */
  expireSec: number;
  /** Where the service sends the `payment.paid` webhook. */
  notifyUrl: string;
}

/**
 * Payment statuses. The spec names only `PAID`; `PENDING` and `EXPIRED` are what the simulator uses, and
 * any other string the service may send is passed through untouched.
 *
 * @example
 * ```ts
 * const done = (status: PaymentStatus) => status === 'PAID';
 * ```
 */
export type PaymentStatus = 'PENDING' | 'PAID' | 'EXPIRED' | (string & {});

/**
 * A payment as the service returns it: the spec's fields (2.2), always present, plus whatever else the
 * service sends (the spec does not show the full representation; the simulator adds `createdAt`,
 * `expiresAt`, `confirmations`, `txId`, `paidAt` and more). Extra fields are kept as received.
 *
 * @example
 * ```ts
 * const payment: Payment = await client.getPayment('p_123');
 * if (payment.status === 'PAID') console.log(`order ${payment.orderNo} paid ${payment.amount} ${payment.tokenSymbol}`);
 * ```
 */
export interface Payment {
  /** Starts with `p_`. */
  paymentId: string;
  status: PaymentStatus;
  orderNo: string;
  tokenSymbol: string;
  amount: string;
  expireSec: number;
  notifyUrl: string;
  [field: string]: unknown;
}
