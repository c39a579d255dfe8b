export type { RequestBody } from './api-signature.js';
export {
  checkPaymentInput,
  PAYMENT_INPUT_LIMITS,
  type PaymentInputCode,
  type PaymentInputProblem,
} from './check-payment-input.js';
export {
  ServiceAbortError,
  ServiceApiError,
  ServiceError,
  type ServiceErrorOptions,
  ServiceInputError,
  type ServiceInputErrorCode,
  ServiceNetworkError,
  ServiceTimeoutError,
} from './errors.js';
export type { CreatePaymentInput, Payment, PaymentStatus } from './payment.js';
export { RETRY_DEFAULTS, type RetryOptions } from './retry-policy.js';
export {
  createServiceClient,
  type RequestOptions,
  type ServiceClient,
  type ServiceClientOptions,
} from './service-client.js';
export { type SignApiRequestInput, signApiRequest } from './sign-api-request.js';
export {
  type ApiRequest,
  type VerifiedApiRequest,
  type VerifyApiRequestOptions,
  verifyApiRequest,
} from './verify-api-request.js';
