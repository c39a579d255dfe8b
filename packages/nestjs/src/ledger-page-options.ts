import type { FactoryProvider, ModuleMetadata } from '@nestjs/common';
import type { LedgerPageOptions } from '@service-pay/core';

/**
 * Options of `ServiceLedgerPageModule.forRoot`: the core's `LedgerPageOptions` (the store, the reconciler,
 * your `authorize`) plus the page's full URL path.
 *
 * @example
 * ```ts
 * const options: ServiceLedgerPageModuleOptions = {
 *   path: '/ops/payments',
 *   store,
 *   reconciler,
 *   authorize: (req) => isOperator(req.headers.get('cookie')), // your session check
 * };
 * ```
 */
export type ServiceLedgerPageModuleOptions = LedgerPageOptions & {
  /**
   * The page's full URL path, e.g. `/ops/payments`. Nest's global prefix is not added: the page is served
   * by the platform itself, like the webhook route.
   */
  path: string;
};

/**
 * Options of `ServiceLedgerPageModule.forRootAsync`: a factory whose arguments Nest injects, so the store,
 * the reconciler and `authorize` can come from your providers.
 *
 * @example
 * ```ts
 * const options: ServiceLedgerPageModuleAsyncOptions = {
 *   imports: [PaymentsModule],
 *   inject: [PaymentsService],
 *   useFactory: (payments: PaymentsService) => ({
 *     path: '/ops/payments',
 *     store: payments.store,
 *     reconciler: payments.reconciler,
 *     authorize: (req) => payments.isOperator(req.headers.get('authorization')),
 *   }),
 * };
 * ```
 */
export interface ServiceLedgerPageModuleAsyncOptions {
  /** Modules that export what `inject` lists. */
  imports?: ModuleMetadata['imports'];
  /** Providers handed to `useFactory`, in order. */
  inject?: FactoryProvider['inject'];
  // biome-ignore lint/suspicious/noExplicitAny: Nest passes the injected providers positionally, untyped.
  useFactory: (...args: any[]) => ServiceLedgerPageModuleOptions | Promise<ServiceLedgerPageModuleOptions>;
}

/** Where the resolved page options live in the module's injector (internal: not exported from the package). */
export const SERVICE_LEDGER_PAGE_OPTIONS = Symbol.for('@service-pay/nestjs/ledger-page-options');
