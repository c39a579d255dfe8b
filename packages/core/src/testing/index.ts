export { type ConformanceCase, type StoreUnderTest, dedupeStoreConformance } from './conformance.js';
export { samplePaymentPaidEvent } from './sample-event.js';
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
