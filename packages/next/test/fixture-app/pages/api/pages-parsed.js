import { createPagesApiHandler } from '@service-pay/next';
import { webhookOptions } from '../../lib/webhook-options.js';

// The mistake RAW_BODY_UNAVAILABLE is for: Next.js's body parser left on (no `config.api.bodyParser: false`).
export default createPagesApiHandler(webhookOptions);
