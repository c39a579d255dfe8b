import type { IncomingMessage, ServerResponse } from 'node:http';
import type { OnModuleInit } from '@nestjs/common';
import type { HttpAdapterHost } from '@nestjs/core';
import { WebhookError } from '@service-pay/core';
import { ledgerPageListener } from '@service-pay/core/node';
import type { ServiceLedgerPageModuleOptions } from './ledger-page-options.js';
import { mountWhenReady } from './mount-when-ready.js';

type Listener = ReturnType<typeof ledgerPageListener>;

interface ExpressLike {
  all(
    path: string,
    handler: (req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void) => void,
  ): unknown;
}

interface FastifyChildLike {
  removeAllContentTypeParsers(): unknown;
  addContentTypeParser(
    contentType: string,
    options: { parseAs: 'string'; bodyLimit: number },
    parser: (request: unknown, body: string, done: (error: null, body: string) => void) => void,
  ): unknown;
  route(route: {
    method: string[];
    url: string;
    handler: (
      request: { raw: IncomingMessage; body?: unknown; url: string },
      reply: { hijack(): void; raw: ServerResponse },
    ) => void;
  }): unknown;
}

interface FastifyLike {
  register(plugin: (child: FastifyChildLike) => Promise<void>): unknown;
}

/**
 * The operator page of one `ServiceLedgerPageModule`: the core's page (its options checked when Nest
 * creates the module, so a missing `authorize` fails `NestFactory.create`), mounted on the platform's own
 * instance as soon as Nest has one, in the same way and at the same moment as the webhook route.
 *
 * @example
 * ```ts
 * // Made by ServiceLedgerPageModule; inject it to see where the page is served.
 * constructor(page: ServiceLedgerPageRoute) { console.log(page.path); }
 * ```
 */
export class ServiceLedgerPageRoute implements OnModuleInit {
  /** The URL path the page is served at. */
  readonly path: string;
  private readonly listener: Listener;
  private readonly checkMounted: () => void;

  constructor(options: ServiceLedgerPageModuleOptions, host: HttpAdapterHost) {
    const { path, ...pageOptions } = options ?? ({} as ServiceLedgerPageModuleOptions);
    if (typeof path !== 'string' || !path.startsWith('/')) {
      throw new WebhookError('INVALID_OPTIONS', 'ServiceLedgerPageModule: path must be a URL path starting with "/".');
    }
    this.path = path;
    try {
      this.listener = ledgerPageListener(pageOptions);
    } catch (error) {
      // The core's own sentence (authorize missing, a store without a ledger), with the module's code.
      throw new WebhookError('INVALID_OPTIONS', `ServiceLedgerPageModule: ${(error as Error).message}`);
    }
    this.checkMounted = mountWhenReady(host, () => this.mount(host));
  }

  /** @internal Called by Nest during `app.init()`. */
  onModuleInit(): void {
    this.checkMounted();
  }

  private mount(host: HttpAdapterHost): void {
    const adapter = host.httpAdapter;
    const type = adapter.getType();
    const listener = this.listener;
    if (type === 'express') {
      // Mounted ahead of Nest's body parsers: the core reads the form itself (bounded at 4 KiB).
      adapter.getInstance<ExpressLike>().all(this.path, (req, res, next) => listener(req, res, next));
    } else if (type === 'fastify') {
      // A child context whose only parser reads the form as text: the app's JSON routes keep theirs.
      adapter.getInstance<FastifyLike>().register(async (child) => {
        child.removeAllContentTypeParsers();
        child.addContentTypeParser('*', { parseAs: 'string', bodyLimit: 4_096 }, (_request, body, done) =>
          done(null, body),
        );
        child.route({
          method: ['GET', 'HEAD', 'POST'],
          url: this.path,
          handler: (request, reply) => {
            reply.hijack();
            listener(Object.assign(request.raw, { body: request.body, originalUrl: request.url }), reply.raw);
          },
        });
      });
    } else {
      throw new WebhookError(
        'INVALID_OPTIONS',
        `@service-pay/nestjs serves the ledger page on @nestjs/platform-express or @nestjs/platform-fastify; this app's HTTP adapter is "${type}".`,
      );
    }
  }
}
