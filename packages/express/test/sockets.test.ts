import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { Writable } from 'node:stream';
import { ADAPTER_SCENARIO_SECRET, type CollectedLogLine, socketScenarios } from '@service-pay/core/testing';
import express from 'express';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { serviceWebhook } from '../src/index.js';

// Short, so 300 stalled clients take a second, not the default ten.
const BODY_TIMEOUT_MS = 1000;
const LEVELS: Record<number, CollectedLogLine['level']> = { 20: 'debug', 30: 'info', 40: 'warn', 50: 'error' };

describe('Express on real sockets: resets mid-body, 100 MB bodies, slow clients', () => {
  const lines: CollectedLogLine[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      const { level, msg, ...fields } = JSON.parse(String(chunk)) as { level: number; msg: string };
      lines.push({ level: LEVELS[level] as CollectedLogLine['level'], message: msg, fields });
      done();
    },
  });
  const app = express();
  app.post(
    '/hooks',
    serviceWebhook({
      secret: ADAPTER_SCENARIO_SECRET,
      onPaymentPaid: () => {},
      bodyTimeoutMs: BODY_TIMEOUT_MS,
      logger: pino({ level: 'debug' }, stream),
    }),
  );
  const server: Server = createServer(app);

  beforeAll(async () => {
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const report = process.env.SOCKET_REPORT
    ? (name: string, figures: Record<string, number>) => console.log(`express ${name}`, figures)
    : undefined;
  const target = { server, path: '/hooks', logs: () => lines, bodyTimeoutMs: BODY_TIMEOUT_MS };
  for (const c of socketScenarios({ ...target, ...(report ? { report } : {}) })) {
    it(c.name, c.run, 60_000);
  }
});
