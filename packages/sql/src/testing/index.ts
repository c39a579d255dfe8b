export {
  beginFailures,
  type CreditingStore,
  creditOnce,
  type DeliveryRoundTrips,
  deliveryRoundTrips,
} from './deliveries.js';
export { type RoundTripProxy, startRoundTripProxy, type WireProtocol } from './round-trip-proxy.js';
