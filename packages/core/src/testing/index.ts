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
export { type ConformanceCase, dedupeStoreConformance, type StoreUnderTest } from './conformance.js';
export { samplePaymentPaidEvent } from './sample-event.js';
