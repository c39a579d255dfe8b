import { createLedgerPage, type LedgerPageOptions } from '@service-pay/core';

/**
 * The operator's page of failing payments (`createLedgerPage`) as App Router route handlers, behind your
 * own `authorize`.
 *
 * @example
 * ```ts
 * // app/ops/payments/route.ts
 * export const { GET, POST } = createLedgerRouteHandlers({ store, reconciler, authorize: (req) => isAdmin(req) });
 * ```
 */
export function createLedgerRouteHandlers(options: LedgerPageOptions): {
  GET: (request: Request) => Promise<Response>;
  POST: (request: Request) => Promise<Response>;
} {
  const page = createLedgerPage(options);
  return { GET: page, POST: page };
}
