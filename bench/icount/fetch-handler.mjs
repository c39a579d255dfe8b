// One delivery through `createFetchHandler` (the Fetch API entry: Next.js, Hono, Bun, Deno, Workers) with
// the memory store, for `../shared/tools/icount`: `node bench/icount/fetch-handler.mjs <contestant> <N> <K>`.
// The Requests are built before the loop; the handler reads each body from its stream, as in production.

import { BENCH_TOLERANCE_SEC, deliveries, runContestant, SECRET } from '@service-pay/bench-kit/icount';
import { createFetchHandler, MemoryDedupeStore } from '@service-pay/core';

export const CONTESTANTS = {
  /** A new payment per Request: body read from the stream, verified, claimed, credited, answered. */
  'fetch-handler': {
    fresh: true,
    make: (size) => {
      const handle = createFetchHandler({
        secret: SECRET,
        toleranceSec: BENCH_TOLERANCE_SEC,
        store: new MemoryDedupeStore({ maxEntries: size + 1 }),
        onPaymentPaid: () => {},
      });
      const pool = deliveries(size).map(
        (d) => new Request('http://localhost/webhooks/service', { method: 'POST', headers: d.headers, body: d.body }),
      );
      return { pool, op: handle };
    },
  },
};

if (import.meta.url === `file://${process.argv[1]}`) await runContestant(CONTESTANTS, 'fetch-handler.mjs');
