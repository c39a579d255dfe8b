import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { type HandlerOptions, signWebhook, type WebhookLogger } from '@service-pay/core';
import {
  ADAPTER_SCENARIO_SECRET,
  type CollectedLogLine,
  fetchSender,
  refusalCases,
  samplePaymentPaidEvent,
} from '@service-pay/core/testing';
import express from 'express';
import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { serviceWebhook } from '../src/index.js';

// The one logger interface takes pino and the console as they are (a compile-time check as much as a test).
const fromPino: WebhookLogger = pino({ enabled: false });
const fromConsole: WebhookLogger = console;
void [fromPino, fromConsole];

const PINO_LEVELS: Record<number, CollectedLogLine['level']> = { 20: 'debug', 30: 'info', 40: 'warn', 50: 'error' };

interface Collector {
  name: string;
  /** The logger option to pass (undefined: the SDK's default, the console). */
  logger: WebhookLogger | undefined;
  lines(): CollectedLogLine[];
  /** Everything written, as text, to search for what must never be there. */
  text(): string;
  /** Whether debug and info lines reach it (the default console logger keeps only warn and error). */
  verbose: boolean;
}

/** pino writing JSON lines to a stream, as in production. */
function pinoCollector(): Collector {
  const raw: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      raw.push(String(chunk));
      done();
    },
  });
  const logger = pino({ level: 'debug' }, stream);
  return {
    name: 'pino',
    logger,
    verbose: true,
    text: () => raw.join(''),
    lines: () =>
      raw.map((line) => {
        const { level, msg, ...fields } = JSON.parse(line) as { level: number; msg: string };
        return { level: PINO_LEVELS[level] as CollectedLogLine['level'], message: msg, fields };
      }),
  };
}

/** The console, given as `logger: console` or left to the SDK's default; console methods are spied on. */
function consoleCollector(asOption: boolean): Collector {
  const calls: Array<{ level: CollectedLogLine['level']; args: unknown[] }> = [];
  for (const level of ['debug', 'info', 'warn', 'error'] as const) {
    vi.spyOn(console, level).mockImplementation((...args: unknown[]) => {
      calls.push({ level, args });
    });
  }
  return {
    name: asOption ? 'logger: console' : 'the default (console)',
    logger: asOption ? console : undefined,
    verbose: asOption,
    text: () => JSON.stringify(calls),
    lines: () =>
      calls.map(({ level, args }) => ({
        level,
        message: String(args.find((a) => typeof a === 'string')),
        fields: (args.find((a) => typeof a === 'object') ?? {}) as Record<string, unknown>,
      })),
  };
}

const servers: Server[] = [];

afterEach(async () => {
  vi.restoreAllMocks();
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** An Express app on a real port: the webhook at /hooks, and behind express.json() at /hooks-parsed. */
async function start(options: Partial<HandlerOptions>) {
  const handlerOptions = { secret: ADAPTER_SCENARIO_SECRET, onPaymentPaid: () => {}, ...options };
  const app = express();
  app.use('/hooks', serviceWebhook(handlerOptions));
  app.use('/hooks-parsed', express.json(), serviceWebhook(handlerOptions));
  const server = createServer(app);
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return fetchSender(url, '/hooks', '/hooks-parsed');
}

describe('Express: pino and the console fit the one logger interface', () => {
  const loggers = [
    { name: 'pino', make: pinoCollector },
    { name: 'logger: console', make: () => consoleCollector(true) },
    { name: 'the default logger (console)', make: () => consoleCollector(false) },
  ];
  for (const { name, make } of loggers) {
    it(`${name}: every refusal at warn with its code and status, never the secret, a signature or the body`, async () => {
      const collector = make();
      const send = await start(collector.logger === undefined ? {} : { logger: collector.logger });
      const cases = refusalCases();
      for (const c of cases) {
        const response = await send(c.request);
        expect([response.status, JSON.parse(response.body).error]).toEqual([c.status, c.code]);
      }
      const warns = collector.lines().filter((l) => l.level === 'warn' && l.fields.hint !== true);
      expect(warns.map((w) => [w.fields.code, w.fields.status])).toEqual(cases.map((c) => [c.code, c.status]));
      for (const w of warns) expect(w.message).toMatch(/^(\[service-pay\] )?Refused a delivery: /);
      // Three of them may be a setup mistake rather than the request's: each fix is said once, at warn.
      const hints = collector.lines().filter((l) => l.fields.hint === true && l.level === 'warn');
      expect(hints.map((h) => [h.fields.code, h.fields.hint])).toEqual([
        ['SIGNATURE_MISMATCH', true],
        ['TIMESTAMP_OUT_OF_TOLERANCE', true],
        ['RAW_BODY_UNAVAILABLE', true],
      ]);
      expect(hints[2]?.message).toContain('Register the webhook route before app.use(express.json())');

      const text = collector.text();
      expect(text).not.toContain(ADAPTER_SCENARIO_SECRET);
      for (const c of cases) for (const secret of c.secrets) expect(text).not.toContain(secret);
      expect(text).not.toContain('order-log-marker-');
    });
  }

  for (const { name, make } of loggers.slice(0, 2)) {
    it(`${name}: a credit at info and its duplicate at debug, with paymentId and deliveryId`, async () => {
      const collector = make();
      const send = await start({ logger: collector.logger as WebhookLogger });
      const event = samplePaymentPaidEvent();
      const { body, headers } = signWebhook({ event, secret: ADAPTER_SCENARIO_SECRET });
      expect((await send({ method: 'POST', headers, body })).status).toBe(200);
      expect((await send({ method: 'POST', headers, body })).status).toBe(200);
      const lines = collector.lines();
      const fields = { status: 200, paymentId: event.paymentId, deliveryId: headers['x-service-delivery'] };
      expect(lines.find((l) => l.level === 'info')).toMatchObject({ message: 'Payment credited.', fields });
      expect(lines.find((l) => l.level === 'debug')?.fields).toMatchObject(fields);
      expect(lines.filter((l) => l.level === 'warn' || l.level === 'error')).toEqual([]);
      expect(collector.text()).not.toContain(event.txId);
      expect(collector.text()).not.toContain(headers['x-service-signature']?.split('v1=')[1]);
    });
  }
});

describe('Express: a setup mistake gets its fix logged once, through the adapter', () => {
  it('an API secret configured as the webhook secret', async () => {
    const collector = pinoCollector();
    const send = await start({ secret: 'sk_test_this_is_the_api_secret', logger: collector.logger as WebhookLogger });
    for (let i = 0; i < 3; i++) {
      const { body, headers } = signWebhook({ event: samplePaymentPaidEvent(), secret: ADAPTER_SCENARIO_SECRET });
      expect((await send({ method: 'POST', headers, body })).status).toBe(401);
    }
    const lines = collector.lines();
    // The first refusal is logged, the next two are counted for the rate limiter's next line.
    expect(lines.filter((l) => l.level === 'warn' && l.fields.hint !== true).map((l) => l.fields.code)).toEqual([
      'SIGNATURE_MISMATCH',
    ]);
    const hints = lines.filter((l) => l.fields.hint === true);
    expect(hints).toHaveLength(1);
    expect(hints[0]).toMatchObject({ level: 'warn', fields: { code: 'SIGNATURE_MISMATCH', status: 401 } });
    expect(hints[0]?.message).toMatch(/looks like an API secret \(sk_\.\.\.\)/);
    expect(collector.text()).not.toContain('sk_test_this_is_the_api_secret');
  });

  it('a body parser in front of the webhook', async () => {
    const collector = pinoCollector();
    const send = await start({ logger: collector.logger as WebhookLogger });
    for (let i = 0; i < 3; i++) {
      const { body, headers } = signWebhook({ event: samplePaymentPaidEvent(), secret: ADAPTER_SCENARIO_SECRET });
      expect((await send({ method: 'POST', headers, body, parsedFirst: true })).status).toBe(500);
    }
    const lines = collector.lines();
    // Refusals are rate-limited per code: the first is logged, the next two are counted for the window's end.
    expect(lines.filter((l) => l.level === 'warn' && l.fields.hint !== true)).toHaveLength(1);
    const hints = lines.filter((l) => l.fields.hint === true);
    expect(hints).toHaveLength(1);
    expect(hints[0]?.message).toContain('Register the webhook route before app.use(express.json())');
  });

  it("this server's clock an hour off", async () => {
    const collector = pinoCollector();
    const send = await start({ now: () => Date.now() + 3_600_000, logger: collector.logger as WebhookLogger });
    for (let i = 0; i < 3; i++) {
      const { body, headers } = signWebhook({ event: samplePaymentPaidEvent(), secret: ADAPTER_SCENARIO_SECRET });
      expect((await send({ method: 'POST', headers, body })).status).toBe(401);
    }
    const hints = collector.lines().filter((l) => l.fields.hint === true);
    expect(hints).toHaveLength(1);
    expect(hints[0]).toMatchObject({ level: 'warn', fields: { code: 'TIMESTAMP_OUT_OF_TOLERANCE' } });
    expect(hints[0]?.message).toMatch(/clock is wrong: check that it is synchronised \(NTP\)/);
  });

  it('whitespace around the secret is refused when the middleware is made, naming the fix, never the secret', () => {
    expect(() => serviceWebhook({ secret: `${ADAPTER_SCENARIO_SECRET}\n`, onPaymentPaid: () => {} })).toThrowError(
      /options\.secret has leading or trailing whitespace \(a newline from an env file is common\): trim it\./,
    );
    const thrown = (() => {
      try {
        serviceWebhook({ secret: ` ${ADAPTER_SCENARIO_SECRET}`, onPaymentPaid: () => {} });
      } catch (error) {
        return error;
      }
    })();
    expect(thrown).toMatchObject({ code: 'INVALID_OPTIONS' });
    expect(String(thrown)).not.toContain(ADAPTER_SCENARIO_SECRET);
  });
});
