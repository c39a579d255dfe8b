import { createRouteHandler } from '@service-pay/next';
import { shop, shopProcess } from '../../../lib/shop';

export const dynamic = 'force-dynamic';
// Node.js, not Edge: the credit writes to PGlite or PostgreSQL (pg), which the Edge runtime cannot run.
export const runtime = 'nodejs';

// `next build` imports this module without the shop's environment: with the secret unset, createRouteHandler
// checks its options on the first request instead of here, and the store getter runs only then. At run time
// the secret is set and everything is checked at once. The store exists synchronously (the handler needs it
// before the shop has booted; its first transaction waits for its table); the credit waits for the booted
// shop, and then runs in the store's transaction (ctx.tx).
export const POST = createRouteHandler({
  secret: process.env.SERVICE_WEBHOOK_SECRET as string,
  get store() {
    return shopProcess().resources.payments.store;
  },
  onPaymentPaid: async (event, ctx) => (await shop()).webhook.onPaymentPaid(event, ctx),
});
