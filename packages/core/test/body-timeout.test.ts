import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createFetchHandler, createWebhookHandler, STATUS_BY_CODE, signWebhook } from '../src/index.js';
import { toWebhookRequest } from '../src/node/index.js';
import { samplePaymentPaidEvent } from '../src/testing/index.js';
import { recordingLogger } from './support/recording-logger.js';

// Issue 26.3: a body that stops arriving is answered 408 BODY_TIMEOUT after bodyTimeoutMs, with the
// connection closed. Before: no deadline (Fastify kept 300/300 slow connections open past 330 s).

const SECRET = 'whsec_body_timeout_tests';

function stalledNodeRequest() {
  const { body, headers } = signWebhook({ event: samplePaymentPaidEvent(), secret: SECRET });
  const req = Object.assign(new PassThrough(), {
    method: 'POST',
    headers: { ...headers, 'content-length': String(body.length) },
  });
  req.write(body.slice(0, 10)); // the first bytes, then nothing
  return req;
}

describe('bodyTimeoutMs', () => {
  it('is 408 in the one status table', () => {
    expect(STATUS_BY_CODE.BODY_TIMEOUT).toBe(408);
  });

  it('a Node body that stalls: 408 BODY_TIMEOUT with connection: close, logged once at warn', async () => {
    const logger = recordingLogger();
    let runs = 0;
    const handle = createWebhookHandler({
      secret: SECRET,
      bodyTimeoutMs: 100,
      logger,
      onPaymentPaid: () => void runs++,
    });
    expect(handle.bodyTimeoutMs).toBe(100);
    const answers = await Promise.all([1, 2, 3].map(() => handle(toWebhookRequest(stalledNodeRequest() as never))));
    for (const answer of answers) {
      expect(answer.status).toBe(408);
      expect(answer.headers.connection).toBe('close');
      expect(JSON.parse(answer.body)).toMatchObject({ error: 'BODY_TIMEOUT' });
    }
    expect(runs).toBe(0);
    expect(logger.at('warn').filter((l) => l.fields.code === 'BODY_TIMEOUT')).toHaveLength(1); // rate-limited
  });

  it('a Node body that arrives in time is read as usual, however it is split', async () => {
    let runs = 0;
    const handle = createWebhookHandler({ secret: SECRET, bodyTimeoutMs: 1000, onPaymentPaid: () => void runs++ });
    const { body, headers } = signWebhook({ event: samplePaymentPaidEvent(), secret: SECRET });
    const req = Object.assign(new PassThrough(), { method: 'POST', headers });
    const answer = handle(toWebhookRequest(req as never));
    for (let i = 0; i < body.length; i += 40) {
      req.write(body.slice(i, i + 40));
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    req.end();
    expect((await answer).status).toBe(200);
    expect(runs).toBe(1);
  });

  it('a fetch body that stalls: 408, and the stream is cancelled', async () => {
    const handle = createFetchHandler({ secret: SECRET, bodyTimeoutMs: 100, onPaymentPaid: () => {} });
    const { body, headers } = signWebhook({ event: samplePaymentPaidEvent(), secret: SECRET });
    let cancelled = false;
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(body.slice(0, 10)));
      },
      cancel() {
        cancelled = true;
      },
    });
    const request = new Request('http://localhost/webhooks/service', {
      method: 'POST',
      headers,
      body: stream,
      duplex: 'half',
    } as RequestInit);
    const response = await handle(request);
    expect(response.status).toBe(408);
    expect(response.headers.get('connection')).toBe('close');
    expect((await response.json()).error).toBe('BODY_TIMEOUT');
    expect(cancelled).toBe(true);
  });

  it('refuses a bodyTimeoutMs that is not a positive number', () => {
    for (const bodyTimeoutMs of [0, -1, Number.NaN, '10'])
      expect(() =>
        createWebhookHandler({ secret: SECRET, bodyTimeoutMs: bodyTimeoutMs as number, onPaymentPaid: () => {} }),
      ).toThrow(/options\.bodyTimeoutMs must be a number of milliseconds above 0/);
  });
});
