import { createPagesApiHandler } from '@service-pay/next';
import { webhookOptions } from '../../lib/webhook-options.js';

// A Pages API route on the Edge runtime: Next.js hands the handler a Request and expects a Response.
export const config = { runtime: 'edge' };
export default createPagesApiHandler(webhookOptions);
