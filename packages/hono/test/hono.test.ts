import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import {
  ADAPTER_SCENARIO_SECRET,
  type AdapterUnderTest,
  adapterScenarios,
  createCreditRecorder,
  fetchSender,
} from '@service-pay/core/testing';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serviceWebhook, WebhookError } from '../src/index.js';

// A real Hono app on @hono/node-server, with the handler mounted the two ways a merchant may mount it.
const recorder = createCreditRecorder();
const options = {
  secret: ADAPTER_SCENARIO_SECRET,
  onPaymentPaid: recorder.onPaymentPaid,
  logger: { warn: () => {}, error: () => {} },
};
const app = new Hono();
app.post('/hooks/post', serviceWebhook(options));
app.all('/hooks/all', serviceWebhook(options));
// The mistake RAW_BODY_UNAVAILABLE is for: the body read before the handler gets the request.
const late = serviceWebhook(options);
app.all('/hooks/parsed', async (c) => {
  await c.req.json();
  return late(c);
});
// The rest of the app keeps reading JSON as usual.
app.post('/api/echo', async (c) => c.json({ parsed: await c.req.json() }));

let server: Server;
let url: string;
beforeAll(async () => {
  server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }) as Server;
  if (!server.listening) await once(server, 'listening');
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const target = (path: string, getReachesAdapter: boolean): AdapterUnderTest => ({
  send: (request) => fetchSender(url, path, '/hooks/parsed')(request),
  credits: recorder.credits,
  getReachesAdapter,
  parsedBodyFix: 'Hand the request over untouched',
});

describe('app.post(path, serviceWebhook(...))', () => {
  for (const c of adapterScenarios(target('/hooks/post', false))) it(c.name, c.run);
});

describe('app.all(path, serviceWebhook(...))', () => {
  for (const c of adapterScenarios(target('/hooks/all', true))) it(c.name, c.run);
});

describe('Hono adapter in its app', () => {
  it('leaves JSON parsing of the other routes alone', async () => {
    const res = await fetch(`${url}/api/echo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"hello":"world"}',
    });
    expect(await res.json()).toEqual({ parsed: { hello: 'world' } });
  });

  it('checks the options when the app is built, not on the first delivery', () => {
    let thrown: unknown;
    try {
      serviceWebhook({ secret: '', onPaymentPaid: () => {} });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(WebhookError);
    expect((thrown as WebhookError).code).toBe('INVALID_OPTIONS');
  });
});
