import 'reflect-metadata';
import type { Server } from 'node:http';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { signWebhook } from '@service-pay/core';
import { ADAPTER_SCENARIO_SECRET, createCreditRecorder, samplePaymentPaidEvent } from '@service-pay/core/testing';
import supertest from 'supertest';
import { describe, expect, it } from 'vitest';
import { ServiceWebhookModule, WebhookError } from '../src/index.js';
import { EchoController, OrdersModule, quiet } from './support/apps.js';

function signed() {
  const event = samplePaymentPaidEvent();
  return { event, ...signWebhook({ event, secret: ADAPTER_SCENARIO_SECRET }) };
}

async function ready(server: Server, app: { getHttpAdapter(): { getType(): string; getInstance(): unknown } }) {
  // supertest against a Fastify-backed app needs Fastify's plugins loaded first.
  if (app.getHttpAdapter().getType() === 'fastify')
    await (app.getHttpAdapter().getInstance() as { ready(): Promise<void> }).ready();
  return supertest(server);
}

describe('ServiceWebhookModule setup', () => {
  for (const platform of ['express', 'fastify'] as const) {
    it(`forRoot serves /webhooks/service by default in a Test.createTestingModule app (${platform})`, async () => {
      const recorder = createCreditRecorder();
      const moduleRef = await Test.createTestingModule({
        imports: [
          ServiceWebhookModule.forRoot({
            secret: ADAPTER_SCENARIO_SECRET,
            onPaymentPaid: recorder.onPaymentPaid,
            logger: quiet,
          }),
        ],
        controllers: [EchoController],
      }).compile();
      // The testing module creates the providers before the HTTP adapter exists: the route is mounted
      // when createNestApplication() brings it, still ahead of init()'s body parsers.
      const app =
        platform === 'express'
          ? moduleRef.createNestApplication({ logger: false })
          : moduleRef.createNestApplication(new FastifyAdapter() as never, { logger: false });
      await app.init();
      try {
        const request = await ready(app.getHttpServer(), app);
        const { event, body, headers } = signed();
        const first = await request.post('/webhooks/service').set(headers).send(body);
        expect([first.status, first.text]).toEqual([200, '{"received":true}']);
        const again = await request.post('/webhooks/service').set(headers).send(body);
        expect([again.status, again.text]).toEqual([200, '{"received":true,"duplicate":true}']);
        expect(recorder.credits(event.paymentId)).toBe(1);
        const echo = await request.post('/api/echo').send({ hello: 'world' });
        expect(echo.body).toEqual({ parsed: { hello: 'world' } });
      } finally {
        await app.close();
      }
    });

    it(`works beside rawBody: true and a global prefix (${platform})`, async () => {
      const recorder = createCreditRecorder();
      @Module({
        imports: [
          OrdersModule,
          ServiceWebhookModule.forRoot({
            path: '/hooks/custom',
            secret: ADAPTER_SCENARIO_SECRET,
            onPaymentPaid: recorder.onPaymentPaid,
            logger: quiet,
          }),
        ],
        controllers: [EchoController],
      })
      class PrefixedModule {}
      const app =
        platform === 'express'
          ? await NestFactory.create(PrefixedModule, { logger: false, rawBody: true })
          : await NestFactory.create(PrefixedModule, new FastifyAdapter() as never, { logger: false, rawBody: true });
      app.setGlobalPrefix('v1');
      await app.init();
      try {
        const request = await ready(app.getHttpServer(), app);
        const { event, body, headers } = signed();
        const res = await request.post('/hooks/custom').set(headers).send(body);
        expect([res.status, res.text]).toEqual([200, '{"received":true}']);
        expect(recorder.credits(event.paymentId)).toBe(1);
        const bad = await request
          .post('/hooks/custom')
          .set({ ...headers, 'x-service-signature': `t=1,v1=${'0'.repeat(64)}` })
          .send(body);
        expect(bad.status).toBe(401);
        const echo = await request.post('/v1/api/echo').send({ hello: 'world' });
        expect(echo.body).toEqual({ parsed: { hello: 'world' } });
      } finally {
        await app.close();
      }
    });

    it(`fails NestFactory.create with INVALID_OPTIONS when the secret is missing (${platform})`, async () => {
      @Module({ imports: [ServiceWebhookModule.forRoot({ secret: '', onPaymentPaid: () => {} })] })
      class MisconfiguredModule {}
      const creating =
        platform === 'express'
          ? NestFactory.create(MisconfiguredModule, { logger: false, abortOnError: false })
          : NestFactory.create(MisconfiguredModule, new FastifyAdapter() as never, {
              logger: false,
              abortOnError: false,
            });
      const error = await creating.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(WebhookError);
      expect((error as WebhookError).code).toBe('INVALID_OPTIONS');
    });
  }

  it('refuses a path that is not a URL path', () => {
    @Module({
      imports: [
        ServiceWebhookModule.forRoot({ path: 'webhooks', secret: ADAPTER_SCENARIO_SECRET, onPaymentPaid: () => {} }),
      ],
    })
    class BadPathModule {}
    return expect(NestFactory.create(BadPathModule, { logger: false, abortOnError: false })).rejects.toMatchObject({
      code: 'INVALID_OPTIONS',
    });
  });
});
