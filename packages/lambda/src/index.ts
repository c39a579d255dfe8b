// The core types and errors a handler needs, so one import serves.
export type {
  HandlerOptions,
  PaidPayment,
  PaymentPaidContext,
  PaymentPaidEvent,
  WebhookErrorCode,
  WebhookLogger,
} from '@service-pay/core';
export { PaymentRejectedError, WebhookError } from '@service-pay/core';
export {
  createLambdaHandler,
  type LambdaHandlerOptions,
  type LambdaWebhookHandler,
} from './create-lambda-handler.js';
export { LambdaEventError, type LambdaEventKind, type LambdaHttpEvent } from './lambda-event.js';
export type { LambdaHttpResult } from './lambda-result.js';
export {
  type LocalHttpApiEvent,
  type LocalLambdaContext,
  type LocalLambdaFunction,
  type LocalLambdaServer,
  type ServeLambdaLocallyOptions,
  serveLambdaLocally,
} from './serve-lambda-locally.js';
