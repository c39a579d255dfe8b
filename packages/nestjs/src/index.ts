// The core types and errors a handler needs, so one import serves.
export type {
  HandlerOptions,
  LedgerPageOptions,
  PaidPayment,
  PaymentPaidContext,
  PaymentPaidEvent,
  WebhookErrorCode,
  WebhookLogger,
} from '@service-pay/core';
export { PaymentRejectedError, WebhookError } from '@service-pay/core';
export { ServiceLedgerPageModule } from './ledger-page-module.js';
export type { ServiceLedgerPageModuleAsyncOptions, ServiceLedgerPageModuleOptions } from './ledger-page-options.js';
export { ServiceLedgerPageRoute } from './ledger-page-route.js';
export { DEFAULT_PATH, type ServiceWebhookModuleAsyncOptions, type ServiceWebhookModuleOptions } from './options.js';
export { ServiceWebhookModule } from './service-webhook-module.js';
export { ServiceWebhookRoute } from './service-webhook-route.js';
