import { Readable, Writable } from 'node:stream';
import { signWebhook } from '@service-pay/core';
import {
  ADAPTER_SCENARIO_SECRET,
  type AdapterUnderTest,
  adapterScenarios,
  createCreditRecorder,
  fetchSender,
  type ScenarioRequest,
  samplePaymentPaidEvent,
} from '@service-pay/core/testing';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { serviceWebhook } from '../src/index.js';

const FIX = 'consumed or replaced the body';

interface LogLine {
  level: number;
  msg: string;
  reqId?: string;
  [field: string]: unknown;
}

/** An app with the plugin on two paths, a JSON route beside them, and logs collected as objects. */
async function buildApp() {
  const recorder = createCreditRecorder();
  const logs: LogLine[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      logs.push(JSON.parse(String(chunk)) as LogLine);
      done();
    },
  });
  const app = Fastify({ logger: { level: 'warn', stream } });
  const bodyLimits = new Map<string, number | undefined>();
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) bodyLimits.set(`${method} ${route.url}`, route.bodyLimit);
  });
  app.post('/api/echo', async (request) => ({ parsed: request.body }));
  await app.register(serviceWebhook, {
    path: '/hooks/service',
    secret: ADAPTER_SCENARIO_SECRET,
    onPaymentPaid: recorder.onPaymentPaid,
  });
  // The mistake RAW_BODY_UNAVAILABLE is for: something in front of the route parsed the body itself.
  await app.register(async (scope) => {
    scope.addHook('preValidation', async (request) => {
      request.body = JSON.parse((request.body as Buffer).toString('utf8'));
    });
    await scope.register(serviceWebhook, {
      path: '/hooks/parsed',
      secret: ADAPTER_SCENARIO_SECRET,
      onPaymentPaid: recorder.onPaymentPaid,
      maxBodyBytes: 4096,
    });
  });
  await app.ready();
  return { app, recorder, logs, bodyLimits };
}

function injectSender(app: FastifyInstance): AdapterUnderTest['send'] {
  return async (request: ScenarioRequest) => {
    const payload = typeof request.body === 'object' ? Readable.from(request.body) : request.body;
    const res = await app.inject({
      method: request.method as 'GET' | 'POST',
      url: request.parsedFirst ? '/hooks/parsed' : '/hooks/service',
      headers: request.headers,
      ...(payload === undefined ? {} : { payload }),
    });
    return { status: res.statusCode, headers: res.headers as Record<string, string>, body: res.body };
  };
}

describe('Fastify plugin through inject', async () => {
  const { app, recorder } = await buildApp();
  afterAll(() => app.close());
  const target: AdapterUnderTest = {
    send: injectSender(app),
    credits: recorder.credits,
    getReachesAdapter: true,
    parsedBodyFix: FIX,
  };
  for (const c of adapterScenarios(target)) it(c.name, c.run);
});

describe('Fastify plugin on a real listen', async () => {
  const { app, recorder } = await buildApp();
  let url = '';
  beforeAll(async () => {
    url = await app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(() => app.close());
  const target: AdapterUnderTest = {
    send: (request) => fetchSender(url, '/hooks/service', '/hooks/parsed')(request),
    credits: recorder.credits,
    getReachesAdapter: true,
    parsedBodyFix: FIX,
  };
  for (const c of adapterScenarios(target)) it(c.name, c.run);
});

describe('Fastify plugin in its app', () => {
  it('leaves JSON parsing to every other route', async () => {
    const { app } = await buildApp();
    const res = await app.inject({ method: 'POST', url: '/api/echo', payload: { hello: 'world' } });
    expect(res.json()).toEqual({ parsed: { hello: 'world' } });
    // ...and the catch-all raw-body parser does not leak to them: an unknown type is still Fastify's own 415.
    const text = await app.inject({
      method: 'POST',
      url: '/api/echo',
      headers: { 'content-type': 'application/octet-stream' },
      payload: 'hi',
    });
    expect(text.statusCode).toBe(415);
    expect(text.json().code).toBe('FST_ERR_CTP_INVALID_MEDIA_TYPE');
    await app.close();
  });

  it('sets the route bodyLimit from maxBodyBytes (default 64 KiB)', async () => {
    const { app, bodyLimits } = await buildApp();
    expect(bodyLimits.get('POST /hooks/service')).toBe(64 * 1024);
    expect(bodyLimits.get('POST /hooks/parsed')).toBe(4096);
    await app.close();
  });

  it('logs through request.log, with the request id', async () => {
    const { app, logs } = await buildApp();
    const event = samplePaymentPaidEvent({ orderNo: 'fail-once-log' });
    const { body, headers } = signWebhook({ event, secret: ADAPTER_SCENARIO_SECRET });
    const res = await app.inject({ method: 'POST', url: '/hooks/service', headers, payload: body });
    expect(res.statusCode).toBe(500);
    const line = logs.find((l) => l.msg.startsWith('onPaymentPaid failed'));
    expect(line?.level).toBe(50);
    expect(typeof line?.reqId).toBe('string');
    expect(line?.paymentId).toBe(event.paymentId);
    await app.close();
  });

  it('keeps each log line with its own request when deliveries interleave', async () => {
    const logs: LogLine[] = [];
    const stream = new Writable({
      write(chunk, _encoding, done) {
        logs.push(JSON.parse(String(chunk)) as LogLine);
        done();
      },
    });
    const app = Fastify({ logger: { level: 'warn', stream }, genReqId: (req) => String(req.headers['x-test-id']) });
    await app.register(serviceWebhook, {
      path: '/hooks',
      secret: ADAPTER_SCENARIO_SECRET,
      onPaymentPaid: async () => {
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 20));
        throw new Error('boom');
      },
    });
    const events = Array.from({ length: 8 }, () => samplePaymentPaidEvent());
    await Promise.all(
      events.map((event) => {
        const { body, headers } = signWebhook({ event, secret: ADAPTER_SCENARIO_SECRET });
        return app.inject({
          method: 'POST',
          url: '/hooks',
          headers: { ...headers, 'x-test-id': event.paymentId },
          payload: body,
        });
      }),
    );
    const failures = logs.filter((l) => l.msg.startsWith('onPaymentPaid failed'));
    expect(failures).toHaveLength(8);
    for (const line of failures) expect(line.reqId).toBe(line.paymentId);
    await app.close();
  });

  it("falls back to the console when Fastify's logger is off, so alerts are not lost", async () => {
    const spy = vi.spyOn(console, 'error').mockImplementation(() => {});
    try {
      const app = Fastify();
      await app.register(serviceWebhook, {
        path: '/hooks',
        secret: ADAPTER_SCENARIO_SECRET,
        onPaymentPaid: () => {
          throw new Error('boom');
        },
      });
      const { body, headers } = signWebhook({ event: samplePaymentPaidEvent(), secret: ADAPTER_SCENARIO_SECRET });
      const res = await app.inject({ method: 'POST', url: '/hooks', headers, payload: body });
      expect(res.statusCode).toBe(500);
      expect(spy.mock.calls.some(([message]) => String(message).includes('onPaymentPaid failed'))).toBe(true);
      await app.close();
    } finally {
      spy.mockRestore();
    }
  });

  it('uses options.logger instead when one is given', async () => {
    const lines: string[] = [];
    const app = Fastify();
    await app.register(serviceWebhook, {
      path: '/hooks',
      secret: ADAPTER_SCENARIO_SECRET,
      onPaymentPaid: () => {
        throw new Error('boom');
      },
      logger: { warn: (_f, m) => lines.push(m), error: (_f, m) => lines.push(m) },
    });
    const { body, headers } = signWebhook({ event: samplePaymentPaidEvent(), secret: ADAPTER_SCENARIO_SECRET });
    const res = await app.inject({ method: 'POST', url: '/hooks', headers, payload: body });
    expect(res.statusCode).toBe(500);
    expect(lines.some((m) => m.startsWith('onPaymentPaid failed'))).toBe(true);
    await app.close();
  });
});
