export { type ConformanceCase, type StoreUnderTest, dedupeStoreConformance } from './conformance.js';
export { samplePaymentPaidEvent } from './sample-event.js';
