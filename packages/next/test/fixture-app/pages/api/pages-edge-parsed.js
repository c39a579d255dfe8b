import { createPagesApiHandler } from '@service-pay/next';
import { webhookOptions } from '../../lib/webhook-options.js';

export const config = { runtime: 'edge' };
const handler = createPagesApiHandler(webhookOptions);

// The mistake RAW_BODY_UNAVAILABLE is for: the route reads the body before handing the request over.
export default async function route(request) {
  await request.json();
  return handler(request);
}
