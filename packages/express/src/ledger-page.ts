import type { LedgerPageOptions } from '@service-pay/core';
import { ledgerPageListener } from '@service-pay/core/node';

/**
 * The operator's page of failing payments (`createLedgerPage`) as Express middleware: mount it under any
 * path, behind your own `authorize`.
 *
 * @example
 * ```ts
 * app.use('/ops/payments', ledgerPage({ store, reconciler, authorize: (req) => req.headers.get('x-admin') === token }));
 * ```
 */
export const ledgerPage = (options: LedgerPageOptions) => ledgerPageListener(options);
