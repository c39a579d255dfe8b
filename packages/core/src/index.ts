export { STATUS_BY_CODE, type WebhookErrorCode } from './errors/error-codes.js';
export { PaymentRejectedError } from './errors/payment-rejected-error.js';
export { WebhookError } from './errors/webhook-error.js';
export { compareAmounts, InvalidAmountError, toRawAmount } from './event/decimal.js';
export { fingerprintOf } from './event/fingerprint.js';
export type { PaidPayment } from './event/paid-payment.js';
export { PAYMENT_PAID, type PaymentPaidEvent } from './event/payment-paid-event.js';
export type { BodyReadLimits } from './http/body-limit.js';
export { createFetchHandler } from './http/fetch-handler.js';
export type { RawBody } from './http/raw-body.js';
export type { WebhookResponse } from './http/response.js';
export type { WebhookRequest } from './http/webhook-request.js';
export { decodeLedgerCursor, encodeLedgerCursor, type LedgerCursor } from './ledger/ledger-cursor.js';
export { flaggedLedgerEntry, ledgerFlagError } from './ledger/ledger-flag.js';
export { LEDGER_MESSAGE_MAX, ledgerMessage } from './ledger/ledger-message.js';
export { createLedgerPage, type LedgerPageOptions } from './ledger/ledger-page.js';
export { MemoryLedger } from './ledger/memory-ledger.js';
export {
  type LedgerChange,
  type LedgerCounts,
  type LedgerEntry,
  type LedgerFailure,
  type LedgerFlagReason,
  type LedgerPage,
  type LedgerPayment,
  type LedgerState,
  ledgerOf,
  type PaymentLedger,
  pageLimit,
} from './ledger/payment-ledger.js';
export { developmentNotice } from './observe/development-notice.js';
export type { WebhookLogger } from './observe/logger.js';
export type { AttemptSource, Outcome, OutcomeKind } from './observe/outcome.js';
export { AttemptStoppedError } from './pipeline/attempt-stopped-error.js';
export type {
  AttemptContext,
  PaymentPaidContext,
  ReconciliationContext,
  WebhookContext,
} from './pipeline/context.js';
export { createWebhookHandler, type WebhookRequestHandler } from './pipeline/create-webhook-handler.js';
export { defaultDedupeKey, type HandlerOptions } from './pipeline/handler-options.js';
export type { PipelineOptions } from './pipeline/pipeline-options.js';
export { StoreTimeoutError } from './pipeline/store-call.js';
export { StorePoolFullError, type StorePoolState } from './pipeline/store-pool.js';
export { MAX_TIMER_MS, type TimerMsOptions, timerMs } from './pipeline/timer-ms.js';
export {
  createReconciler,
  type ReadPayment,
  type ReconcileOutcome,
  type ReconcileReport,
  type ReconcileResult,
  type Reconciler,
  type ReconcilerOptions,
} from './reconcile/create-reconciler.js';
export { type SignWebhookInput, signWebhook } from './sign/sign-webhook.js';
export type { ClaimOutcome, DedupeStore } from './store/dedupe-store.js';
export { guardTransaction } from './store/guard-transaction.js';
export { type HeldTransaction, holdTransaction } from './store/held-transaction.js';
export { MemoryDedupeStore, type MemoryDedupeStoreOptions } from './store/memory-store.js';
export type {
  InboxDraft,
  InboxRecord,
  TransactionalStore,
  TransactionClaim,
  TransactionSession,
  TxOf,
  WebhookStore,
} from './store/transactional-store.js';
export type { HeadersInput } from './verify/headers.js';
export type { VerifyOptions } from './verify/verify-options.js';
export { type VerifiedDelivery, type VerifyInput, verifyWebhook } from './verify/verify-webhook.js';
