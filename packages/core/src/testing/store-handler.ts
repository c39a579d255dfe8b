import type { PaymentPaidEvent } from '../event/payment-paid-event.js';
import type { WebhookResponse } from '../http/response.js';
import type { WebhookLogger } from '../observe/logger.js';
import { createWebhookHandler, type WebhookRequestHandler } from '../pipeline/create-webhook-handler.js';
import { signWebhook } from '../sign/sign-webhook.js';
import type { TransactionalStore } from '../store/transactional-store.js';

/**
 * What a transactional store's tests give `storeHandler`: the store, the secret to sign with, and the
 * handler options they vary (`handlerTimeoutMs` may be `undefined`: the handler's default).
 *
 * @example
 * ```ts
 * const options: StoreHandlerOptions<PoolClient> = { store, secret, logger: quiet, handlerTimeoutMs: 500 };
 * ```
 */
export interface StoreHandlerOptions<Tx> {
  store: TransactionalStore<Tx>;
  secret: string;
  logger?: WebhookLogger | undefined;
  handlerTimeoutMs?: number | undefined;
}

/**
 * A webhook handler on a transactional store whose `onPaymentPaid(event, tx)` is given `ctx.tx`: how a
 * store's tests write their credit inside the delivery's transaction.
 *
 * @example
 * ```ts
 * const handle = storeHandler({ store, secret }, async (event, tx) => credit(tx, event.paymentId));
 * await sendSigned(handle, samplePaymentPaidEvent(), secret); // status 200
 * ```
 */
export function storeHandler<Tx>(
  options: StoreHandlerOptions<Tx>,
  onPaymentPaid: (event: PaymentPaidEvent, tx: Tx) => Promise<void>,
): WebhookRequestHandler {
  const { store, secret, logger, handlerTimeoutMs } = options;
  return createWebhookHandler({
    secret,
    store,
    ...(logger === undefined ? {} : { logger }),
    ...(handlerTimeoutMs === undefined ? {} : { handlerTimeoutMs }),
    // ctx has `tx` for every transactional store; with Tx generic here, TypeScript cannot tell.
    onPaymentPaid: (event, ctx) => onPaymentPaid(event, (ctx as unknown as { tx: Tx }).tx),
  });
}

/**
 * Signs a delivery of `event` with `secret`, as the service would, and hands it to `handle`.
 *
 * @example
 * ```ts
 * const { status } = await sendSigned(handle, samplePaymentPaidEvent(), secret);
 * ```
 */
export function sendSigned(
  handle: WebhookRequestHandler,
  event: PaymentPaidEvent,
  secret: string,
): Promise<WebhookResponse> {
  const { body, headers } = signWebhook({ event, secret });
  return handle({ method: 'POST', headers, rawBody: body });
}
