// stripe-node's `webhooks.constructEvent` as one operation, for the instruction counts (bench/README.md):
// the reference of `verifyWebhook`'s 1.8x target, counted as `check` is. Run as
// `node bench/icount/stripe.mjs stripe <N> <K>` (bench-kit's icount.mjs); `pnpm bench:icount stripe verify`
// prints the ratio.
//
// A script of its own: the memory path's counts stay those of their own script, whose code (and so what
// V8 and the collector do around a window) this reference would otherwise change.
import { BENCH_TOLERANCE_SEC, deliveries, runContestant, SECRET } from '@service-pay/bench-kit/icount';
import Stripe from 'stripe';

export const CONTESTANTS = {
  /** `constructEvent` on the service's deliveries: its header scheme (`t=...,v1=...`) is the service's. */
  stripe: {
    fresh: true,
    make: (size) => {
      const { webhooks } = new Stripe('sk_test_icount', { telemetry: false });
      return {
        pool: deliveries(size),
        op: (d) => webhooks.constructEvent(d.body, d.headers['x-service-signature'], SECRET, BENCH_TOLERANCE_SEC),
      };
    },
  },
};

if (import.meta.url === `file://${process.argv[1]}`) await runContestant(CONTESTANTS, 'stripe.mjs');
