import { once } from 'node:events';
import { createServer } from 'node:http';
import { ADAPTER_SCENARIO_SECRET, type CollectedLogLine, socketScenarios } from '@service-pay/core/testing';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { createPagesApiHandler } from '../src/index.js';

// The Pages Router handler takes Node's own request and response, so a plain http.Server stands in for
// `next start` here (cheap; next-app.test.ts runs it inside a built Next.js app).
describe('Pages API handler on real sockets: resets mid-body, 100 MB bodies, slow clients', () => {
  const lines: CollectedLogLine[] = [];
  const log = (level: CollectedLogLine['level']) => (fields: Record<string, unknown>, message: string) => {
    lines.push({ level, message, fields });
  };
  const handler = createPagesApiHandler({
    secret: ADAPTER_SCENARIO_SECRET,
    onPaymentPaid: () => {},
    bodyTimeoutMs: 1000, // short, so 300 stalled clients take a second
    logger: { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') },
  });
  const server = createServer((req, res) => {
    handler(req, res).catch((error: unknown) => {
      lines.push({ level: 'error', message: String(error), fields: {} });
    });
  });

  beforeAll(async () => {
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const report = process.env.SOCKET_REPORT
    ? (name: string, figures: Record<string, number>) => console.log(`next pages ${name}`, figures)
    : undefined;
  const target = { server, path: '/api/hooks', logs: () => lines, bodyTimeoutMs: 1000 };
  for (const c of socketScenarios({ ...target, ...(report ? { report } : {}) })) {
    it(c.name, c.run, 60_000);
  }
});
