import { Logger, type OnModuleInit } from '@nestjs/common';
import type { HttpAdapterHost } from '@nestjs/core';
import {
  createWebhookHandler,
  WebhookError,
  type WebhookLogger,
  type WebhookRequestHandler,
  type WebhookStore,
} from '@service-pay/core';
import { type ExpressAppLike, mountOnExpress } from './express-route.js';
import { type FastifyInstanceLike, mountOnFastify } from './fastify-route.js';
import { mountWhenReady } from './mount-when-ready.js';
import { DEFAULT_PATH, type ServiceWebhookModuleOptions } from './options.js';

/**
 * The webhook route of one `ServiceWebhookModule`: the core's handler, built (and its options checked)
 * when Nest creates the module's providers, and mounted on the platform's own instance as soon as Nest has
 * one. That is before `app.init()` mounts Nest's body parsers, which is what lets the route read the raw
 * body with the app's body parsing left as it is.
 *
 * @example
 * ```ts
 * // Made by ServiceWebhookModule; inject it to see where the webhook is served.
 * constructor(route: ServiceWebhookRoute) { console.log(route.path); }
 * ```
 */
export class ServiceWebhookRoute implements OnModuleInit {
  /** The URL path the webhook is served at. */
  readonly path: string;
  private readonly handle: WebhookRequestHandler;
  private readonly checkMounted: () => void;

  constructor(options: ServiceWebhookModuleOptions<WebhookStore>, host: HttpAdapterHost) {
    const { path = DEFAULT_PATH, ...handlerOptions } = options ?? ({} as ServiceWebhookModuleOptions<WebhookStore>);
    if (typeof path !== 'string' || !path.startsWith('/')) {
      throw new WebhookError('INVALID_OPTIONS', 'options.path must be a URL path starting with "/".');
    }
    this.path = path;
    this.handle = createWebhookHandler({ ...handlerOptions, logger: handlerOptions.logger ?? nestLogger() });
    this.checkMounted = mountWhenReady(host, () => this.mount(host));
  }

  /** @internal Called by Nest during `app.init()`. */
  onModuleInit(): void {
    this.checkMounted();
  }

  private mount(host: HttpAdapterHost): void {
    const adapter = host.httpAdapter;
    const type = adapter.getType();
    if (type === 'express') mountOnExpress(adapter.getInstance<ExpressAppLike>(), this.path, this.handle);
    else if (type === 'fastify') mountOnFastify(adapter.getInstance<FastifyInstanceLike>(), this.path, this.handle);
    else {
      throw new WebhookError(
        'INVALID_OPTIONS',
        `@service-pay/nestjs serves the webhook on @nestjs/platform-express or @nestjs/platform-fastify; this app's HTTP adapter is "${type}".`,
      );
    }
  }
}

/** The core's reports through Nest's logger, so they follow the app's logger settings. */
function nestLogger(): WebhookLogger {
  const log = new Logger('ServiceWebhookModule');
  return {
    warn: (fields, message) => log.warn(message, fields),
    error: (fields, message) => log.error(message, fields),
  };
}
