import { once } from 'node:events';
import type { Server } from 'node:http';
import { serve } from '@hono/node-server';
import { ADAPTER_SCENARIO_SECRET, type CollectedLogLine, socketScenarios } from '@service-pay/core/testing';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { serviceWebhook } from '../src/index.js';

// Hono on @hono/node-server over real sockets: the core's fetch reader holds the deadline here.
describe('Hono on real sockets: slow clients', () => {
  const lines: CollectedLogLine[] = [];
  const log = (level: CollectedLogLine['level']) => (fields: Record<string, unknown>, message: string) => {
    lines.push({ level, message, fields });
  };
  const app = new Hono();
  app.post(
    '/hooks',
    serviceWebhook({
      secret: ADAPTER_SCENARIO_SECRET,
      onPaymentPaid: () => {},
      bodyTimeoutMs: 1000, // short, so 300 stalled clients take a second
      logger: { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') },
    }),
  );
  let server: Server;

  beforeAll(async () => {
    server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }) as Server;
    if (!server.listening) await once(server, 'listening');
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const report = process.env.SOCKET_REPORT
    ? (name: string, figures: Record<string, number>) => console.log(`hono ${name}`, figures)
    : undefined;
  it('300 slow clients that stop mid-body: each gets 408 BODY_TIMEOUT and its connection closed', async () => {
    const target = { server, path: '/hooks', logs: () => lines, bodyTimeoutMs: 1000, ...(report ? { report } : {}) };
    // The slow-clients case only: the reset and 100 MB cases are run by the adapters that read Node
    // streams themselves (Express, Fastify, the Pages handler).
    const [slow] = socketScenarios(target);
    await slow?.run();
  }, 60_000);
});
