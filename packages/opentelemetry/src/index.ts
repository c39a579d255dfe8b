export { DURATION_BUCKETS_SEC, TELEMETRY_NAMES } from './names.js';
export {
  type ServiceWebhookTelemetry,
  type ServiceWebhookTelemetryOptions,
  serviceWebhookTelemetry,
} from './service-webhook-telemetry.js';
