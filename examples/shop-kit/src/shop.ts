import { randomUUID } from 'node:crypto';
import { type CreatePaymentInput, checkPaymentInput, type ServiceClient } from '@service-pay/client';
import type { Order, OrderBook } from './orders.ts';

const SHOP_ERROR = Symbol.for('@service-pay/example-shop-kit/ShopError');

/** A refused order request, with the HTTP status the routes answer. */
export class ShopError extends Error {
  // A brand instead of prototype identity, as the core's errors do: Next.js bundles a copy of this module
  // into each route and page, and the copy that booted the shop may not be the one that catches its error.
  static override [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[SHOP_ERROR] === true;
  }
  override readonly name = 'ShopError';

  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

Object.defineProperty(ShopError.prototype, SHOP_ERROR, { value: true });

/** The notify URL as given, or as known once the server listens. */
export type NotifyUrl = string | (() => string);

/**
 * A new order's payment request from the shop's order form, checked: a fresh order id, the amount and token
 * as sent, and where the webhook comes back. Refused with a 400 `ShopError` naming every problem.
 */
export function paymentRequestFor(
  input: { amount?: unknown; tokenSymbol?: unknown },
  notifyUrl: NotifyUrl,
  expireSec = 900,
): CreatePaymentInput {
  const request = {
    orderNo: `order_${randomUUID().replaceAll('-', '').slice(0, 20)}`,
    tokenSymbol: input.tokenSymbol as string,
    amount: input.amount as string,
    expireSec,
    notifyUrl: typeof notifyUrl === 'function' ? notifyUrl() : notifyUrl,
  };
  const problems = checkPaymentInput(request);
  if (problems.length > 0) throw new ShopError(400, 'INVALID_ORDER', problems.map((p) => p.message).join(' '));
  return request;
}

/** Asks the payment service for the order's payment; its refusal becomes a 502 `ShopError`. */
export async function requestPayment(client: Pick<ServiceClient, 'createPayment'>, request: CreatePaymentInput) {
  try {
    return (await client.createPayment(request)).paymentId;
  } catch (error) {
    throw new ShopError(502, 'PAYMENT_SERVICE_FAILED', `The payment service refused: ${(error as Error).message}`);
  }
}

export interface PlacedOrder {
  order: Order;
  paymentId: string;
}

/**
 * The shop's own business, framework-free: place an order and ask the payment service for a payment
 * whose webhook comes back to `notifyUrl`.
 */
export function createShop(options: {
  book: OrderBook;
  client: ServiceClient;
  /** A function when the address is known only once the server listens. */
  notifyUrl: NotifyUrl;
  expireSec?: number;
}) {
  const { book, client, notifyUrl } = options;
  return {
    book,
    async placeOrder(input: { amount?: unknown; tokenSymbol?: unknown }): Promise<PlacedOrder> {
      const request = paymentRequestFor(input, notifyUrl, options.expireSec);
      const order = await book.create({
        id: request.orderNo,
        amount: request.amount,
        tokenSymbol: request.tokenSymbol,
      });
      const paymentId = await requestPayment(client, request);
      await book.attachPayment(order.id, paymentId);
      return { order: { ...order, paymentId }, paymentId };
    },
  };
}

export type Shop = ReturnType<typeof createShop>;
