export { type ServiceWebhookOptions, serviceWebhook } from './service-webhook.js';
