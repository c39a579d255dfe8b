import { type DynamicModule, Module, type Provider } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import {
  SERVICE_LEDGER_PAGE_OPTIONS,
  type ServiceLedgerPageModuleAsyncOptions,
  type ServiceLedgerPageModuleOptions,
} from './ledger-page-options.js';
import { ServiceLedgerPageRoute } from './ledger-page-route.js';

const routeProvider: Provider = {
  provide: ServiceLedgerPageRoute,
  useFactory: (options: ServiceLedgerPageModuleOptions, host: HttpAdapterHost) =>
    new ServiceLedgerPageRoute(options, host),
  inject: [SERVICE_LEDGER_PAGE_OPTIONS, HttpAdapterHost],
};

/**
 * The operator's page of failing payments (the core's `createLedgerPage`) in a NestJS app, on
 * `@nestjs/platform-express` or `@nestjs/platform-fastify`: the failing and flagged payments, one payment's
 * story, and a "reconcile" action that credits a payment once through your reconciler.
 *
 * Like the webhook route, the page is served by the platform itself, so Nest's guards do not run in front of
 * it: `authorize` (required, no default) is its only gate and is called on every request. Its actions are
 * POSTs refused unless same-origin and carrying the page's CSRF token.
 *
 * @example
 * ```ts
 * @Module({
 *   imports: [
 *     ServiceLedgerPageModule.forRoot({
 *       path: '/ops/payments',
 *       store,
 *       reconciler,
 *       authorize: (req) => isOperator(req.headers.get('cookie')), // your session check
 *     }),
 *   ],
 * })
 * export class AppModule {}
 * ```
 */
// biome-ignore lint/complexity/noStaticOnlyClass: Nest modules are classes; forRoot/forRootAsync are its convention.
export class ServiceLedgerPageModule {
  /**
   * The page with options known up front.
   *
   * @example
   * ```ts
   * ServiceLedgerPageModule.forRoot({ path: '/ops/payments', store, reconciler, authorize: (req) => isOperator(req) })
   * ```
   */
  static forRoot(options: ServiceLedgerPageModuleOptions): DynamicModule {
    return {
      module: ServiceLedgerPageModule,
      providers: [{ provide: SERVICE_LEDGER_PAGE_OPTIONS, useValue: options }, routeProvider],
      exports: [ServiceLedgerPageRoute],
    };
  }

  /**
   * The page with options made by a factory that Nest injects, so the store, the reconciler and the check
   * can come from your providers.
   *
   * @example
   * ```ts
   * ServiceLedgerPageModule.forRootAsync({
   *   imports: [PaymentsModule],
   *   inject: [PaymentsService],
   *   useFactory: (payments: PaymentsService) => ({
   *     path: '/ops/payments',
   *     store: payments.store,
   *     reconciler: payments.reconciler,
   *     authorize: (req) => payments.isOperator(req),
   *   }),
   * })
   * ```
   */
  static forRootAsync(options: ServiceLedgerPageModuleAsyncOptions): DynamicModule {
    return {
      module: ServiceLedgerPageModule,
      imports: options.imports ?? [],
      providers: [
        { provide: SERVICE_LEDGER_PAGE_OPTIONS, useFactory: options.useFactory, inject: options.inject ?? [] },
        routeProvider,
      ],
      exports: [ServiceLedgerPageRoute],
    };
  }
}

// Applied as a call rather than `@Module({})`, so the build needs no decorator transform.
Module({})(ServiceLedgerPageModule);
