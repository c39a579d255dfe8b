import { type RouteConfig, route } from '@react-router/dev/routes';

export default [route('webhooks/service', 'routes/webhook.ts')] satisfies RouteConfig;
