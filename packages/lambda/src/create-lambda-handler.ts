import { createWebhookHandler, type DedupeStore, type HandlerOptions, type WebhookStore } from '@service-pay/core';
import { eventKind, type LambdaHttpEvent, toWebhookRequest } from './lambda-event.js';
import { type LambdaHttpResult, toLambdaResult } from './lambda-result.js';

/**
 * Options of `createLambdaHandler`: the core's handler options, unchanged.
 *
 * @example
 * ```ts
 * const options: LambdaHandlerOptions = { secret: process.env.SERVICE_WEBHOOK_SECRET!, onPaymentPaid };
 * ```
 */
export type LambdaHandlerOptions<S extends WebhookStore = DedupeStore> = HandlerOptions<S>;

/**
 * The Lambda handler: an HTTP event in, its answer out. Lambda's `context` and callback are not needed.
 *
 * @example
 * ```ts
 * export const handler: LambdaWebhookHandler = createLambdaHandler({ secret, onPaymentPaid });
 * ```
 */
export type LambdaWebhookHandler = (event: LambdaHttpEvent) => Promise<LambdaHttpResult>;

/**
 * An AWS Lambda handler that verifies a payment service webhook and runs `onPaymentPaid` exactly once per
 * payment. It takes API Gateway REST API (payload 1.0) and HTTP API (2.0) events, Function URL events and
 * ALB events, told apart by their shape; decodes a base64 body (`isBase64Encoded`) to the exact bytes
 * that were signed; keeps multi-value headers as lists, so a header sent twice is refused; and returns the
 * core's answer in the shape the event's source expects. The options, secret included, are checked when
 * the module loads (a cold start), not on the first delivery.
 *
 * Lambda freezes the process once the answer is returned: prefer a transactional store
 * (`@service-pay/postgres`), whose record commits before the answer, to a lease store (see the README).
 *
 * @example
 * ```ts
 * import { createLambdaHandler } from '@service-pay/lambda';
 *
 * export const handler = createLambdaHandler({
 *   secret: process.env.SERVICE_WEBHOOK_SECRET!,
 *   onPaymentPaid: async (event) => console.log('credit order', event.orderNo, event.amount),
 * });
 * ```
 */
export function createLambdaHandler<S extends WebhookStore = DedupeStore>(
  options: LambdaHandlerOptions<S>,
): LambdaWebhookHandler {
  const handle = createWebhookHandler(options);
  return async (event) => {
    const kind = eventKind(event);
    const answer = await handle(toWebhookRequest(event, kind));
    return toLambdaResult(answer, kind, kind === 'alb' && event.multiValueHeaders != null);
  };
}
