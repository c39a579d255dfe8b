import 'reflect-metadata';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Body, Controller, type INestApplication, Injectable, Module, Post } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import type { PaymentPaidEvent } from '@service-pay/core';
import { ADAPTER_SCENARIO_SECRET, type CollectedLogLine, createCreditRecorder } from '@service-pay/core/testing';
import express from 'express';
import { ServiceWebhookModule, type ServiceWebhookModuleOptions } from '../../src/index.js';

export const quiet = { warn: () => {}, error: () => {} };

/** A service of the app that the webhook's onPaymentPaid calls through Nest's injector. */
@Injectable()
export class OrdersService {
  readonly recorder = createCreditRecorder();
  credit(event: PaymentPaidEvent): Promise<void> {
    return this.recorder.onPaymentPaid(event);
  }
}

@Module({ providers: [OrdersService], exports: [OrdersService] })
export class OrdersModule {}

/** The rest of the app: a JSON route that must keep its parsed body. */
@Controller('api')
export class EchoController {
  @Post('echo')
  echo(@Body() body: unknown) {
    return { parsed: body };
  }
}

/** Log lines of the /hooks/slow route, for the slow-clients case. */
export const slowRouteLines: CollectedLogLine[] = [];
const collect = (level: CollectedLogLine['level']) => (fields: Record<string, unknown>, message: string) => {
  slowRouteLines.push({ level, message, fields });
};

const webhook = (path: string, extra: Partial<ServiceWebhookModuleOptions> = {}) =>
  ServiceWebhookModule.forRootAsync({
    imports: [OrdersModule],
    inject: [OrdersService],
    useFactory: (orders: OrdersService) => ({
      path,
      secret: ADAPTER_SCENARIO_SECRET,
      onPaymentPaid: (event: PaymentPaidEvent) => orders.credit(event),
      logger: quiet,
      ...extra,
    }),
  });

/** bodyTimeoutMs short, so 300 stalled clients take a second. */
export const SLOW_ROUTE_BODY_TIMEOUT_MS = 1000;

/** The merchant's app: the webhook at /hooks/service, and /hooks/parsed with a parser in front on purpose. */
@Module({
  imports: [
    OrdersModule,
    webhook('/hooks/service'),
    webhook('/hooks/parsed'),
    webhook('/hooks/slow', {
      bodyTimeoutMs: SLOW_ROUTE_BODY_TIMEOUT_MS,
      logger: { debug: collect('debug'), info: collect('info'), warn: collect('warn'), error: collect('error') },
    }),
  ],
  controllers: [EchoController],
})
export class AppModule {}

export type Platform = 'express' | 'fastify';

export interface RunningApp {
  app: INestApplication;
  server: Server;
  url: string;
  orders: OrdersService;
}

/**
 * Creates the app as a merchant's main.ts would: NestFactory.create with Nest's default body parsing (no
 * rawBody option), then a global JSON parser of the merchant's own, then listen.
 */
export async function startApp(platform: Platform): Promise<RunningApp> {
  let app: INestApplication;
  if (platform === 'express') {
    const instance = express();
    // The mistake RAW_BODY_UNAVAILABLE is for: a parser on the Express instance before Nest got it.
    instance.use('/hooks/parsed', express.json());
    app = await NestFactory.create(AppModule, new ExpressAdapter(instance), { logger: false });
    app.use(express.json());
  } else {
    const adapter = new FastifyAdapter();
    // The mistake RAW_BODY_UNAVAILABLE is for: a hook in front of the route that parsed the body itself.
    adapter.getInstance().addHook('preValidation', async (request) => {
      if (request.url === '/hooks/parsed' && request.body !== undefined) {
        let text = '';
        for await (const chunk of request.body as AsyncIterable<Buffer>) text += chunk;
        request.body = JSON.parse(text);
      }
    });
    app = await NestFactory.create(AppModule, adapter as never, { logger: false });
  }
  await app.listen(0, '127.0.0.1');
  const server = app.getHttpServer() as Server;
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { app, server, url, orders: app.get(OrdersService) };
}
