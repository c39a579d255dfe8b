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
export { createLedgerRouteHandlers } from './ledger-page.js';
export { createPagesApiHandler, type PagesApiHandler, type PagesApiHandlerOptions } from './pages-api-handler.js';
export { createRouteHandler, type RouteHandler, type RouteHandlerOptions } from './route-handler.js';
