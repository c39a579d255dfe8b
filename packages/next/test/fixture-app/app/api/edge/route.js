import { createRouteHandler } from '@service-pay/next';
import { webhookOptions } from '../../../lib/webhook-options.js';

export const runtime = 'edge';
export const POST = createRouteHandler(webhookOptions);
