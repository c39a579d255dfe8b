export {
  ADAPTER_SCENARIO_SECRET,
  type AdapterUnderTest,
  adapterScenarios,
  type CreditRecorder,
  createCreditRecorder,
  fetchSender,
  type ScenarioRequest,
  type ScenarioResponse,
} from './adapter-scenarios.js';
export {
  type ConformanceCase,
  dedupeStoreConformance,
  type StoreUnderTest,
  type TransactionalWrites,
  transactionalStoreConformance,
} from './conformance.js';
export { type Latch, latch } from './latch.js';
export { type LedgerSubject, ledgerConformance } from './ledger-cases.js';
export { type RefusalCase, refusalCases } from './refusal-cases.js';
export { samplePaymentPaidEvent } from './sample-event.js';
export { type CollectedLogLine, type SocketTarget, socketScenarios } from './socket-scenarios.js';
export { type StoreHandlerOptions, sendSigned, storeHandler } from './store-handler.js';
