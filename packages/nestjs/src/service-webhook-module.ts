import { type DynamicModule, Module, type Provider } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { DedupeStore, WebhookStore } from '@service-pay/core';
import {
  SERVICE_WEBHOOK_OPTIONS,
  type ServiceWebhookModuleAsyncOptions,
  type ServiceWebhookModuleOptions,
} from './options.js';
import { ServiceWebhookRoute } from './service-webhook-route.js';

const routeProvider: Provider = {
  provide: ServiceWebhookRoute,
  useFactory: (options: ServiceWebhookModuleOptions<WebhookStore>, host: HttpAdapterHost) =>
    new ServiceWebhookRoute(options, host),
  inject: [SERVICE_WEBHOOK_OPTIONS, HttpAdapterHost],
};

/**
 * Serves the payment service's `payment.paid` webhook in a NestJS app, on `@nestjs/platform-express` or
 * `@nestjs/platform-fastify`: verified signature, typed event, `onPaymentPaid` run exactly once per payment.
 *
 * The route is mounted on the platform's own instance (Express app or Fastify instance) before Nest mounts
 * its body parsers, so it reads the exact bytes the signature covers without `rawBody: true` or any other
 * change to the app's body parsing, and every other route keeps parsing JSON as before. Being served by the
 * platform, it is not under Nest's global prefix, guards, interceptors or filters: the signature is its
 * authentication, and the core decides every status.
 *
 * @example
 * ```ts
 * @Module({
 *   imports: [
 *     ServiceWebhookModule.forRootAsync({
 *       imports: [OrdersModule],
 *       inject: [OrdersService],
 *       useFactory: (orders: OrdersService) => ({
 *         secret: process.env.SERVICE_WEBHOOK_SECRET!,
 *         onPaymentPaid: (event) => orders.credit(event.orderNo, event.paymentId, event.amount),
 *       }),
 *     }),
 *   ],
 * })
 * export class AppModule {}
 * ```
 */
// biome-ignore lint/complexity/noStaticOnlyClass: Nest modules are classes; forRoot/forRootAsync are its convention.
export class ServiceWebhookModule {
  /**
   * The module with options known up front.
   *
   * @example
   * ```ts
   * ServiceWebhookModule.forRoot({ secret: process.env.SERVICE_WEBHOOK_SECRET!, onPaymentPaid: (event) => credit(event) })
   * ```
   */
  static forRoot<S extends WebhookStore = DedupeStore>(options: ServiceWebhookModuleOptions<S>): DynamicModule {
    return {
      module: ServiceWebhookModule,
      providers: [{ provide: SERVICE_WEBHOOK_OPTIONS, useValue: options }, routeProvider],
      exports: [ServiceWebhookRoute],
    };
  }

  /**
   * The module with options made by a factory that Nest injects, so `onPaymentPaid` can use your services.
   *
   * @example
   * ```ts
   * ServiceWebhookModule.forRootAsync({
   *   imports: [OrdersModule],
   *   inject: [OrdersService],
   *   useFactory: (orders: OrdersService) => ({ secret, onPaymentPaid: (event) => orders.credit(event) }),
   * })
   * ```
   */
  static forRootAsync<S extends WebhookStore = DedupeStore>(
    options: ServiceWebhookModuleAsyncOptions<S>,
  ): DynamicModule {
    return {
      module: ServiceWebhookModule,
      imports: options.imports ?? [],
      providers: [
        { provide: SERVICE_WEBHOOK_OPTIONS, useFactory: options.useFactory, inject: options.inject ?? [] },
        routeProvider,
      ],
      exports: [ServiceWebhookRoute],
    };
  }
}

// Applied as a call rather than `@Module({})`, so the build needs no decorator transform.
Module({})(ServiceWebhookModule);
