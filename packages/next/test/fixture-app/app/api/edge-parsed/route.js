import { createRouteHandler } from '@service-pay/next';
import { webhookOptions } from '../../../lib/webhook-options.js';

export const runtime = 'edge';
const handler = createRouteHandler(webhookOptions);

// The mistake RAW_BODY_UNAVAILABLE is for: the route reads the body before handing the request over.
export async function POST(request) {
  await request.json();
  return handler(request);
}
