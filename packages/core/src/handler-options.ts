import type { DedupeStore } from './dedupe-store.js';
import { WebhookError } from './errors.js';
import type { PaymentPaidEvent } from './event.js';
import { consoleLogger, type WebhookLogger } from './logger.js';
import { MemoryDedupeStore } from './memory-store.js';
import { type ResolvedVerifyOptions, resolveVerifyOptions, type VerifyOptions } from './verify.js';
import { withTimeout } from './with-timeout.js';

/**
 * What `onPaymentPaid` gets besides the event.
 *
 * @example
 * ```ts
 * onPaymentPaid: async (event, { deliveryId, signal }) => {
 *   await db.transaction(async (tx) => { ...; if (signal.aborted) throw signal.reason; });
 * }
 * ```
 */
export interface PaymentPaidContext {
  /** `X-Service-Delivery` of this attempt. */
  deliveryId: string;
  /** The signed timestamp, Unix seconds. */
  timestamp: number;
  /** Aborts when this delivery's lease is lost: another attempt may now run, so do not credit. */
  signal: AbortSignal;
}

/**
 * Options of `createWebhookHandler`, `createFetchHandler` and every adapter.
 *
 * @example
 * ```ts
 * const options: HandlerOptions = {
 *   secret: process.env.SERVICE_WEBHOOK_SECRET!,
 *   onPaymentPaid: async (event) => creditOrder(event.orderNo, event.paymentId),
 * };
 * ```
 */
export interface HandlerOptions extends VerifyOptions {
  /** Credits the order. Resolve when done; throw to have the sender retry; throw `PaymentRejectedError` to reject for good. */
  onPaymentPaid: (event: PaymentPaidEvent, ctx: PaymentPaidContext) => unknown | Promise<unknown>;
  /** Default: one `MemoryDedupeStore` per handler. Use `RedisDedupeStore` with several instances. */
  store?: DedupeStore;
  /** Default `payment.paid:<paymentId>`: the signed payment id, never the unsigned delivery id. */
  dedupeKey?: (event: PaymentPaidEvent) => string;
  /** How long a claim holds before another delivery may take over; extended while the handler runs. Default 60 s. */
  leaseMs?: number;
  /** How long a completed key is remembered. Default 7 days. */
  retainMs?: number;
  /** Largest body accepted. Default 64 KiB. */
  maxBodyBytes?: number;
  /** Longest wait for any store call before answering 503. Default 2 s, well under the sender's 5 s. */
  storeTimeoutMs?: number;
  /** Default: warnings and errors to the console. */
  logger?: WebhookLogger;
}

export interface ResolvedHandlerOptions {
  verify: ResolvedVerifyOptions;
  onPaymentPaid: HandlerOptions['onPaymentPaid'];
  store: DedupeStore;
  dedupeKey: (event: PaymentPaidEvent) => string;
  leaseMs: number;
  retainMs: number;
  maxBodyBytes: number;
  storeTimeoutMs: number;
  logger: WebhookLogger;
  /** Bounds a store call by `storeTimeoutMs`; the identity for the in-process store, which cannot hang. */
  bounded: <T>(call: Promise<T>, what: string) => Promise<T>;
}

const defaultDedupeKey = (event: PaymentPaidEvent) => `payment.paid:${event.paymentId}`;

function positive(name: string, value: number | undefined, fallback: number): number {
  const v = value ?? fallback;
  if (!(Number.isFinite(v) && v > 0))
    throw new WebhookError('INVALID_OPTIONS', `options.${name} must be a positive number.`);
  return v;
}

/** Checks every option once, at start-up, so a misconfiguration fails the deploy, not a payment. */
export function resolveHandlerOptions(options: HandlerOptions): ResolvedHandlerOptions {
  const verify = resolveVerifyOptions(options);
  if (typeof options.onPaymentPaid !== 'function') {
    throw new WebhookError('INVALID_OPTIONS', 'options.onPaymentPaid must be a function that credits the order.');
  }
  const store = options.store ?? new MemoryDedupeStore();
  for (const method of ['claim', 'complete', 'release', 'extend'] as const) {
    if (typeof store[method] !== 'function') {
      throw new WebhookError('INVALID_OPTIONS', `options.store must implement DedupeStore (missing ${method}).`);
    }
  }
  const logger = options.logger ?? consoleLogger;
  if (typeof logger.warn !== 'function' || typeof logger.error !== 'function') {
    throw new WebhookError('INVALID_OPTIONS', 'options.logger must have warn and error methods.');
  }
  const storeTimeoutMs = positive('storeTimeoutMs', options.storeTimeoutMs, 2_000);
  return {
    verify,
    onPaymentPaid: options.onPaymentPaid,
    store,
    dedupeKey: options.dedupeKey ?? defaultDedupeKey,
    leaseMs: positive('leaseMs', options.leaseMs, 60_000),
    retainMs: positive('retainMs', options.retainMs, 7 * 24 * 60 * 60 * 1000),
    maxBodyBytes: positive('maxBodyBytes', options.maxBodyBytes, 64 * 1024),
    storeTimeoutMs,
    logger,
    bounded:
      store instanceof MemoryDedupeStore ? (call) => call : (call, what) => withTimeout(call, storeTimeoutMs, what),
  };
}
