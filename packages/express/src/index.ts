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
export { keepRawBody } from './keep-raw-body.js';
export { ledgerPage } from './ledger-page.js';
export { type ServiceWebhookMiddleware, type ServiceWebhookOptions, serviceWebhook } from './service-webhook.js';
