import { Writable } from 'node:stream';
import { type HandlerOptions, signWebhook, type WebhookLogger } from '@service-pay/core';
import {
  ADAPTER_SCENARIO_SECRET,
  type CollectedLogLine,
  fetchSender,
  refusalCases,
  samplePaymentPaidEvent,
} from '@service-pay/core/testing';
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { serviceWebhook } from '../src/index.js';

// Fastify's `request.log` (pino) is a WebhookLogger as it is: checked at compile time.
const requestLogIsALogger = (request: FastifyRequest): WebhookLogger => request.log;
void requestLogIsALogger;

const LEVELS: Record<number, CollectedLogLine['level']> = { 20: 'debug', 30: 'info', 40: 'warn', 50: 'error' };

const apps: FastifyInstance[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

/**
 * A Fastify app on a real port with its logger at debug: the webhook at /hooks, and behind a hook that
 * parses the body first at /hooks-parsed. Lines are collected as Fastify's pino writes them.
 */
async function start(options: Partial<HandlerOptions> = {}) {
  const raw: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      raw.push(String(chunk));
      done();
    },
  });
  const app = Fastify({ logger: { level: 'debug', stream } });
  apps.push(app);
  const handlerOptions = { secret: ADAPTER_SCENARIO_SECRET, onPaymentPaid: () => {}, ...options };
  await app.register(serviceWebhook, { path: '/hooks', ...handlerOptions });
  await app.register(async (scope) => {
    scope.addHook('preValidation', async (request) => {
      request.body = JSON.parse((request.body as Buffer).toString('utf8'));
    });
    await scope.register(serviceWebhook, { path: '/hooks-parsed', ...handlerOptions });
  });
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  const lines = (): CollectedLogLine[] =>
    raw.map((line) => {
      const { level, msg, ...fields } = JSON.parse(line) as { level: number; msg: string };
      return { level: LEVELS[level] as CollectedLogLine['level'], message: msg, fields };
    });
  // Only the SDK's lines: Fastify's own request logging ("incoming request", ...) carries no `code`.
  const sdkLines = () => lines().filter((l) => l.fields.code !== undefined);
  return { send: fetchSender(url, '/hooks', '/hooks-parsed'), lines, sdkLines, text: () => raw.join('') };
}

describe('Fastify: request.log fits the one logger interface', () => {
  it('every refusal at warn with its code, status and request id; never the secret, a signature or the body', async () => {
    const { send, sdkLines, text } = await start();
    const cases = refusalCases();
    for (const c of cases) {
      const response = await send(c.request);
      expect([response.status, JSON.parse(response.body).error]).toEqual([c.status, c.code]);
    }
    const warns = sdkLines().filter((l) => l.level === 'warn' && l.fields.hint !== true);
    expect(warns.map((w) => [w.fields.code, w.fields.status])).toEqual(cases.map((c) => [c.code, c.status]));
    // Each line is its request's: Fastify's request id is on it, the 413 its body limit refused included.
    for (const w of warns) expect(typeof w.fields.reqId).toBe('string');
    expect(new Set(warns.map((w) => w.fields.reqId)).size).toBe(cases.length);
    const hints = sdkLines().filter((l) => l.fields.hint === true && l.level === 'warn');
    expect(hints.map((h) => [h.fields.code, h.fields.hint])).toEqual([
      ['SIGNATURE_MISMATCH', true],
      ['TIMESTAMP_OUT_OF_TOLERANCE', true],
      ['RAW_BODY_UNAVAILABLE', true],
    ]);
    expect(hints[2]?.message).toContain('consumed or replaced the body');

    const all = text();
    expect(all).not.toContain(ADAPTER_SCENARIO_SECRET);
    for (const c of cases) for (const secret of c.secrets) expect(all).not.toContain(secret);
    expect(all).not.toContain('order-log-marker-');
  });

  it('a credit at info and its duplicate at debug, with paymentId and deliveryId', async () => {
    const { send, lines, text } = await start();
    const event = samplePaymentPaidEvent();
    const { body, headers } = signWebhook({ event, secret: ADAPTER_SCENARIO_SECRET });
    expect((await send({ method: 'POST', headers, body })).status).toBe(200);
    expect((await send({ method: 'POST', headers, body })).status).toBe(200);
    const fields = { status: 200, paymentId: event.paymentId, deliveryId: headers['x-service-delivery'] };
    const sdk = lines().filter((l) => l.fields.paymentId !== undefined);
    expect(sdk.map((l) => [l.level, l.message])).toEqual([
      ['info', 'Payment credited.'],
      ['debug', 'Duplicate of a payment handled before; not handled again.'],
    ]);
    for (const line of sdk) expect(line.fields).toMatchObject(fields);
    expect(lines().filter((l) => l.level === 'warn' || l.level === 'error')).toEqual([]);
    expect(text()).not.toContain(event.txId);
  });
});

describe('Fastify: a setup mistake gets its fix logged once, through request.log', () => {
  const deliver = async (send: Awaited<ReturnType<typeof start>>['send'], parsedFirst = false) => {
    const { body, headers } = signWebhook({ event: samplePaymentPaidEvent(), secret: ADAPTER_SCENARIO_SECRET });
    return (await send({ method: 'POST', headers, body, parsedFirst })).status;
  };

  it('an API secret configured as the webhook secret', async () => {
    const { send, sdkLines, text } = await start({ secret: 'sk_test_this_is_the_api_secret' });
    for (let i = 0; i < 3; i++) expect(await deliver(send)).toBe(401);
    expect(
      sdkLines()
        .filter((l) => l.level === 'warn' && l.fields.hint !== true)
        .map((l) => l.fields.code),
    ).toEqual(['SIGNATURE_MISMATCH']);
    const hints = sdkLines().filter((l) => l.fields.hint === true);
    expect(hints).toHaveLength(1);
    expect(hints[0]?.message).toMatch(/looks like an API secret \(sk_\.\.\.\)/);
    expect(text()).not.toContain('sk_test_this_is_the_api_secret');
  });

  it('a hook that parses the body first', async () => {
    const { send, sdkLines } = await start();
    for (let i = 0; i < 3; i++) expect(await deliver(send, true)).toBe(500);
    const hints = sdkLines().filter((l) => l.fields.hint === true);
    expect(hints).toHaveLength(1);
    expect(hints[0]).toMatchObject({ level: 'warn', fields: { code: 'RAW_BODY_UNAVAILABLE' } });
  });

  it("this server's clock an hour off", async () => {
    const { send, sdkLines } = await start({ now: () => Date.now() + 3_600_000 });
    for (let i = 0; i < 3; i++) expect(await deliver(send)).toBe(401);
    const hints = sdkLines().filter((l) => l.fields.hint === true);
    expect(hints).toHaveLength(1);
    expect(hints[0]?.message).toMatch(/clock is wrong/);
  });
});
