import { createRouteHandler } from '@service-pay/next';
import { webhookOptions } from '../../../lib/webhook-options.js';

export const runtime = 'nodejs';
export const POST = createRouteHandler(webhookOptions);
