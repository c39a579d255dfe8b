import { createPagesApiHandler } from '@service-pay/next';
import { webhookOptions } from '../../lib/webhook-options.js';

export const config = { api: { bodyParser: false } };
export default createPagesApiHandler(webhookOptions);
