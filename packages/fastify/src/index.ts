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
export { ledgerPage } from './ledger-page.js';
export { type ServiceWebhookOptions, serviceWebhook } from './service-webhook.js';
