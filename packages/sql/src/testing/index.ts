export { type CreditingStore, creditOnce, type DeliveryRoundTrips, deliveryRoundTrips } from './deliveries.js';
export { type GuardCase, type GuardSubject, writeGuardCases } from './guard-cases.js';
export { type RoundTripProxy, startRoundTripProxy, type WireProtocol } from './round-trip-proxy.js';
