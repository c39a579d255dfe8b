import type { FactoryProvider, ModuleMetadata } from '@nestjs/common';
import type { DedupeStore, HandlerOptions, WebhookStore } from '@service-pay/core';

/**
 * Options of `ServiceWebhookModule.forRoot`: the core's handler options, plus the route's path.
 *
 * @example
 * ```ts
 * const options: ServiceWebhookModuleOptions = { path: '/webhooks/service', secret, onPaymentPaid };
 * ```
 */
export type ServiceWebhookModuleOptions<S extends WebhookStore = DedupeStore> = HandlerOptions<S> & {
  /**
   * The route's full URL path. Default `/webhooks/service`. Nest's global prefix is not added: the route is
   * served by the platform itself, ahead of Nest's body parsers (see the module's description).
   */
  path?: string;
};

/**
 * Options of `ServiceWebhookModule.forRootAsync`: a factory whose arguments Nest injects, so
 * `onPaymentPaid` can call your services.
 *
 * @example
 * ```ts
 * const options: ServiceWebhookModuleAsyncOptions = {
 *   imports: [OrdersModule],
 *   inject: [OrdersService, ConfigService],
 *   useFactory: (orders: OrdersService, config: ConfigService) => ({
 *     secret: config.getOrThrow('SERVICE_WEBHOOK_SECRET'),
 *     onPaymentPaid: (event) => orders.credit(event.orderNo, event.paymentId, event.amount),
 *   }),
 * };
 * ```
 */
export interface ServiceWebhookModuleAsyncOptions<S extends WebhookStore = DedupeStore> {
  /** Modules that export what `inject` lists. */
  imports?: ModuleMetadata['imports'];
  /** Providers handed to `useFactory`, in order. */
  inject?: FactoryProvider['inject'];
  // biome-ignore lint/suspicious/noExplicitAny: Nest passes the injected providers positionally, untyped.
  useFactory: (...args: any[]) => ServiceWebhookModuleOptions<S> | Promise<ServiceWebhookModuleOptions<S>>;
}

/** Where the resolved options live in the module's injector (internal: not exported from the package). */
export const SERVICE_WEBHOOK_OPTIONS = Symbol.for('@service-pay/nestjs/options');

/**
 * The path used when the options give none.
 *
 * @example
 * ```ts
 * await fetch(new URL(DEFAULT_PATH, 'http://127.0.0.1:3000'), { method: 'POST', headers, body });
 * ```
 */
export const DEFAULT_PATH = '/webhooks/service';
