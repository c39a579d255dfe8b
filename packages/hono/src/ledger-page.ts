import { createLedgerPage, type LedgerPageOptions } from '@service-pay/core';
import type { Context } from 'hono';

/**
 * The operator's page of failing payments (`createLedgerPage`) as a Hono handler, behind your own
 * `authorize`.
 *
 * @example
 * ```ts
 * app.all('/ops/payments', ledgerPage({ store, reconciler, authorize: (req) => isAdmin(req) }));
 * ```
 */
export function ledgerPage(options: LedgerPageOptions): (c: Context) => Promise<Response> {
  const page = createLedgerPage(options);
  return (c) => page(c.req.raw);
}
