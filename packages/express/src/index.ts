export { type ServiceWebhookMiddleware, type ServiceWebhookOptions, serviceWebhook } from './service-webhook.js';
