export type {
  AttemptOutcome,
  DeliveryAttempt,
  DeliveryAttemptEvent,
  DeliveryKind,
  DeliveryRecord,
  DeliveryState,
} from './delivery-log.js';
export { SIMULATOR_STATUS_BY_CODE, SimulatorError, type SimulatorErrorCode } from './errors.js';
export { generateMerchant, type MerchantConfig } from './merchant.js';
export type { FaultOptions, RetryOptions, SimulatorOptions } from './options.js';
export type { DeliveryFaultOptions, PayOptions } from './pay-options.js';
export type { SimulatedPayment } from './payment-store.js';
export {
  type PayResult,
  type Simulator,
  type SimulatorFaults,
  type SimulatorMerchant,
  startSimulator,
} from './simulator.js';
