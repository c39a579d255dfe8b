import { WebhookError } from '../errors/webhook-error.js';
import type { PaidPayment } from '../event/paid-payment.js';
import type { PaymentPaidEvent } from '../event/payment-paid-event.js';
import type { BodyReadLimits } from '../http/body-limit.js';
import { DEFAULT_BODY_TIMEOUT_MS } from '../http/webhook-request.js';
import type { DedupeStore } from '../store/dedupe-store.js';
import type { TxOf, WebhookStore } from '../store/transactional-store.js';
import { type ResolvedVerifyOptions, resolveVerifyOptions, type VerifyOptions } from '../verify/verify-options.js';
import type { WebhookContext } from './context.js';
import { refuseUnknownOptions } from './known-options.js';
import {
  type PipelineOptions,
  positiveOption,
  type ResolvedPipelineOptions,
  resolvePipelineOptions,
} from './pipeline-options.js';
import { timerMs } from './timer-ms.js';

/**
 * Options of `createWebhookHandler`, `createFetchHandler` and every adapter. Generic over the store, so
 * `ctx.tx` is typed when the store is transactional.
 *
 * @example
 * ```ts
 * const options: HandlerOptions = {
 *   secret: process.env.SERVICE_WEBHOOK_SECRET!,
 *   onPaymentPaid: async (event, ctx) => creditOrder(event.orderNo, event.paymentId, ctx.signal),
 * };
 * ```
 */
export type HandlerOptions<S extends WebhookStore = DedupeStore> = HandlerSettings<S> &
  Pick<PipelineOptions<S>, 'store'>;

/**
 * What `HandlerOptions` holds. `HandlerOptions` adds `store` once more, as an intersection: TypeScript then
 * infers the store from `store` even when another option is misspelt, and reports the misspelt key
 * ("'onPaymentPayed' does not exist... Did you mean 'onPaymentPaid'?"). With one interface, a misspelt
 * `onPaymentPaid` failed the store's inference and the error blamed the store ("PostgresStore is missing
 * claim, complete, release, extend").
 *
 * @example
 * ```ts
 * const settings: HandlerSettings = { secret: process.env.SERVICE_WEBHOOK_SECRET!, onPaymentPaid: () => {} };
 * ```
 */
export interface HandlerSettings<S extends WebhookStore = DedupeStore> extends VerifyOptions, PipelineOptions<S> {
  /**
   * Credits the order. Resolve when done; throw to have the sender retry; throw `PaymentRejectedError` to
   * reject for good. Check `ctx.signal` (or await `ctx.confirmLease()`) right before you commit.
   */
  onPaymentPaid: (event: PaymentPaidEvent, ctx: WebhookContext<TxOf<S>>) => unknown;
  /** Default `payment.paid:<paymentId>`: the signed payment id, never the unsigned delivery id. */
  dedupeKey?: (event: PaymentPaidEvent) => string;
  /** Largest body accepted. Default 64 KiB. */
  maxBodyBytes?: number;
  /**
   * Longest wait for the body once reading began, in ms. Default 10,000 (the sender gives up after 5 s).
   * A slower client gets 408 `BODY_TIMEOUT` and its connection closed, so slow uploads cannot hold
   * sockets open (Fastify's own `requestTimeout` is off by default; Node's is 300 s).
   */
  bodyTimeoutMs?: number;
}

/** Handler options checked and defaulted once. */
export interface ResolvedHandlerOptions {
  verify: ResolvedVerifyOptions;
  pipeline: ResolvedPipelineOptions;
  // biome-ignore lint/suspicious/noExplicitAny: the context type depends on the store, checked at the call site
  onPaymentPaid: (event: PaymentPaidEvent, ctx: any) => unknown;
  dedupeKey: (event: PaymentPaidEvent) => string;
  maxBodyBytes: number;
  bodyLimits: BodyReadLimits;
}

/**
 * The default dedupe key, shared by the webhook handler and the reconciler so both claim the same key.
 *
 * @example
 * ```ts
 * defaultDedupeKey({ paymentId: 'p_1', orderNo: 'o', tokenSymbol: 'USDT', amount: '1' }); // 'payment.paid:p_1'
 * ```
 */
export const defaultDedupeKey = (payment: PaidPayment): string => `payment.paid:${payment.paymentId}`;

// Every key of HandlerOptions, checked against the type: an option added there and not here fails to compile.
const HANDLER_OPTION_KEYS = Object.keys({
  secret: true,
  toleranceSec: true,
  now: true,
  store: true,
  leaseMs: true,
  handlerTimeoutMs: true,
  storeTimeoutMs: true,
  retainMs: true,
  logger: true,
  onOutcome: true,
  onPaymentPaid: true,
  dedupeKey: true,
  maxBodyBytes: true,
  bodyTimeoutMs: true,
} satisfies Record<keyof HandlerSettings<WebhookStore>, true>);

/** Checks every option once, at start-up, so a misconfiguration fails the deploy, not a payment. */
export function resolveHandlerOptions<S extends WebhookStore>(options: HandlerOptions<S>): ResolvedHandlerOptions {
  // Unknown keys first: a misspelt `secrets` is better named as such than reported as a missing `secret`.
  if (options !== null && typeof options === 'object') refuseUnknownOptions(options, HANDLER_OPTION_KEYS);
  const verify = resolveVerifyOptions(options);
  if (typeof options.onPaymentPaid !== 'function') {
    throw new WebhookError('INVALID_OPTIONS', 'options.onPaymentPaid must be a function that credits the order.');
  }
  if (options.dedupeKey !== undefined && typeof options.dedupeKey !== 'function') {
    throw new WebhookError('INVALID_OPTIONS', 'options.dedupeKey must be a function of the event.');
  }
  return {
    verify,
    pipeline: resolvePipelineOptions(options),
    onPaymentPaid: options.onPaymentPaid,
    dedupeKey: options.dedupeKey ?? defaultDedupeKey,
    maxBodyBytes: positiveOption('maxBodyBytes', options.maxBodyBytes, 64 * 1024),
    bodyLimits: { timeoutMs: timerMs(options.bodyTimeoutMs, DEFAULT_BODY_TIMEOUT_MS, 'options.bodyTimeoutMs') },
  };
}
