export type {
  AttemptOutcome,
  DeliveryAttempt,
  DeliveryAttemptEvent,
  DeliveryKind,
  DeliveryRecord,
  DeliveryState,
} from './core/delivery-log.js';
export {
  type PaymentInputErrorCode,
  SIMULATOR_STATUS_BY_CODE,
  SimulatorError,
  type SimulatorErrorCode,
} from './core/errors.js';
export { generateMerchant, type MerchantConfig } from './core/merchant.js';
export type { MerchantApiFault, MerchantApiFaultOptions } from './core/merchant-api-fault.js';
export type { FaultOptions, RetryOptions, SimulatorOptions } from './core/options.js';
export type { DeliveryFaultOptions, PaymentAmendment, PayOptions } from './core/pay-options.js';
export { DEFAULT_PAYMENT_LIMITS, type PaymentLimits } from './core/payment-input.js';
export type { SimulatedPayment } from './core/payment-store.js';
export type { PayResult, TestPaymentInput } from './core/simulator-core.js';
export { type Simulator, type SimulatorFaults, type SimulatorMerchant, startSimulator } from './simulator.js';
