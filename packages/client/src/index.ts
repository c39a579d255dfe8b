export type { RequestBody } from './api-signature.js';
export {
  checkPaymentInput,
  PAYMENT_INPUT_LIMITS,
  type PaymentInputCode,
  type PaymentInputProblem,
} from './check-payment-input.js';
export {
  ServiceApiError,
  ServiceError,
  ServiceInputError,
  type ServiceInputErrorCode,
  ServiceNetworkError,
  ServiceTimeoutError,
} from './errors.js';
export type { CreatePaymentInput, Payment, PaymentStatus } from './payment.js';
export { createServiceClient, type ServiceClient, type ServiceClientOptions } from './service-client.js';
export { type SignApiRequestInput, signApiRequest } from './sign-api-request.js';
export {
  type ApiRequest,
  type VerifiedApiRequest,
  type VerifyApiRequestOptions,
  verifyApiRequest,
} from './verify-api-request.js';
