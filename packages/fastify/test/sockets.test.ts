import { Writable } from 'node:stream';
import { ADAPTER_SCENARIO_SECRET, type CollectedLogLine, socketScenarios } from '@service-pay/core/testing';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { serviceWebhook } from '../src/index.js';

// Short, so 300 stalled clients take a second, not the default ten.
const BODY_TIMEOUT_MS = 1000;
const LEVELS: Record<number, CollectedLogLine['level']> = { 20: 'debug', 30: 'info', 40: 'warn', 50: 'error' };

describe('Fastify on real sockets: resets mid-body, 100 MB bodies, slow clients', async () => {
  // Every line Fastify writes, its own included: a reset must not show up as Fastify's 400 either.
  const lines: CollectedLogLine[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      const { level, msg, ...fields } = JSON.parse(String(chunk)) as { level: number; msg: string };
      lines.push({ level: LEVELS[level] ?? 'error', message: msg, fields });
      done();
    },
  });
  const app = Fastify({ logger: { level: 'debug', stream } });
  await app.register(serviceWebhook, {
    path: '/hooks',
    secret: ADAPTER_SCENARIO_SECRET,
    onPaymentPaid: () => {},
    bodyTimeoutMs: BODY_TIMEOUT_MS,
  });

  beforeAll(async () => {
    await app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(() => app.close());

  const report = process.env.SOCKET_REPORT
    ? (name: string, figures: Record<string, number>) => console.log(`fastify ${name}`, figures)
    : undefined;
  for (const c of socketScenarios({
    server: app.server,
    path: '/hooks',
    logs: () => lines,
    bodyTimeoutMs: BODY_TIMEOUT_MS,
    ...(report ? { report } : {}),
  })) {
    it(c.name, c.run, 60_000);
  }
});
