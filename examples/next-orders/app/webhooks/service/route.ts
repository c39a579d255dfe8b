import { createRouteHandler } from '@service-pay/next';
import { shop, shopProcess } from '../../../lib/shop';

export const dynamic = 'force-dynamic';
// Node.js, not Edge: the credit writes to PGlite or PostgreSQL (pg), which the Edge runtime cannot run.
export const runtime = 'nodejs';

// createRouteHandler reads its options on the first request, not here: the getters read the environment
// then, so `next build` can import this module without the shop's secrets. The store exists synchronously
// (the handler needs it before the shop has booted); the credit waits for the booted shop.
export const POST = createRouteHandler({
  get secret() {
    return shopProcess().config.webhookSecret;
  },
  get store() {
    return shopProcess().dedupe.store;
  },
  onPaymentPaid: async (event, ctx) => (await shop()).webhook.onPaymentPaid(event, ctx),
});
