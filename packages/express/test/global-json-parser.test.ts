import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { signWebhook } from '@service-pay/core';
import { ADAPTER_SCENARIO_SECRET, createCreditRecorder, samplePaymentPaidEvent } from '@service-pay/core/testing';
import express from 'express';
import { afterAll, describe, expect, it } from 'vitest';
import { keepRawBody, serviceWebhook } from '../src/index.js';

// Regression: with express.json() mounted globally, the RAW_BODY_UNAVAILABLE message advised putting
// express.raw() in front of the route, which cannot help (the global parser has already read the stream).
// The message now gives the two fixes that do work there; both are followed here.
describe('express.json() mounted globally, in front of the webhook route', () => {
  const servers: Server[] = [];
  afterAll(async () => {
    for (const server of servers) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  async function start(app: express.Express): Promise<string> {
    const server = createServer(app);
    servers.push(server);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  const silent = { warn: () => {}, error: () => {} };
  const send = (url: string, event = samplePaymentPaidEvent()) => {
    const { body, headers } = signWebhook({ event, secret: ADAPTER_SCENARIO_SECRET });
    return fetch(`${url}/webhooks/service`, { method: 'POST', headers, body });
  };

  it('answers RAW_BODY_UNAVAILABLE with fixes that work for a global parser, and express.raw() is not one', async () => {
    const app = express();
    app.use(express.json());
    // The old hint, followed: it changes nothing, since the global parser ran first.
    app.post(
      '/webhooks/service',
      express.raw({ type: 'application/json' }),
      serviceWebhook({ secret: ADAPTER_SCENARIO_SECRET, onPaymentPaid: () => {}, logger: silent }),
    );
    const res = await send(await start(app));
    expect(res.status).toBe(500);
    const { error, message } = (await res.json()) as { error: string; message: string };
    expect(error).toBe('RAW_BODY_UNAVAILABLE');
    expect(message).toContain('Register the webhook route before app.use(express.json())');
    expect(message).toContain('express.json({ verify: keepRawBody }), keepRawBody from @service-pay/express');
    expect(message).not.toContain('express.raw(');
  });

  it('credits once the route is registered before the global parser (the first fix)', async () => {
    const recorder = createCreditRecorder();
    const app = express();
    app.post(
      '/webhooks/service',
      serviceWebhook({ secret: ADAPTER_SCENARIO_SECRET, onPaymentPaid: recorder.onPaymentPaid, logger: silent }),
    );
    app.use(express.json());
    const event = samplePaymentPaidEvent();
    expect((await send(await start(app), event)).status).toBe(200);
    expect(recorder.credits(event.paymentId)).toBe(1);
  });

  it("credits with the global parser's verify hook keeping the bytes (the second fix)", async () => {
    const recorder = createCreditRecorder();
    const app = express();
    app.use(express.json({ verify: keepRawBody })); // typed: a strict tsc accepts it (the README block is compiled)
    app.post(
      '/webhooks/service',
      serviceWebhook({ secret: ADAPTER_SCENARIO_SECRET, onPaymentPaid: recorder.onPaymentPaid, logger: silent }),
    );
    const event = samplePaymentPaidEvent();
    expect((await send(await start(app), event)).status).toBe(200);
    expect(recorder.credits(event.paymentId)).toBe(1);
  });
});
