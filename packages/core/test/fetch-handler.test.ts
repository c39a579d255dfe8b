import { describe, expect, it } from 'vitest';
import { createFetchHandler, signWebhook } from '../src/index.js';
import { samplePaymentPaidEvent } from '../src/testing/index.js';

const SECRET = 'whsec_fetch_handler_tests';

describe('createFetchHandler', () => {
  it('answers a fetch Request with a Response: first delivery, then duplicate', async () => {
    let runs = 0;
    const handle = createFetchHandler({ secret: SECRET, onPaymentPaid: () => void runs++ });
    const { body, headers } = signWebhook({ event: samplePaymentPaidEvent(), secret: SECRET });
    const send = () => handle(new Request('http://localhost/webhooks/service', { method: 'POST', body, headers }));
    const first = await send();
    expect(first.status).toBe(200);
    expect(first.headers.get('content-type')).toMatch(/application\/json/);
    expect(await first.json()).toEqual({ received: true });
    expect(await (await send()).json()).toEqual({ received: true, duplicate: true });
    expect(runs).toBe(1);
  });

  it('stops reading a streamed body past maxBodyBytes and cancels the stream', async () => {
    const handle = createFetchHandler({ secret: SECRET, maxBodyBytes: 64 * 1024, onPaymentPaid: () => {} });
    let pulled = 0;
    let cancelled = false;
    const chunk = new Uint8Array(16 * 1024).fill(0x20);
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled += chunk.length;
        if (pulled > 1024 * 1024) controller.close();
        else controller.enqueue(chunk);
      },
      cancel() {
        cancelled = true;
      },
    });
    const { headers } = signWebhook({ event: samplePaymentPaidEvent(), secret: SECRET });
    const res = await handle(
      new Request('http://localhost/', { method: 'POST', body: stream, headers, duplex: 'half' } as RequestInit),
    );
    expect(res.status).toBe(413);
    expect((await res.json()).error).toBe('BODY_TOO_LARGE');
    expect(cancelled).toBe(true);
    expect(pulled).toBeLessThan(256 * 1024); // a few chunks past the limit at most, not the whole MiB
  });

  it('answers GET with 405 without touching the body', async () => {
    const handle = createFetchHandler({ secret: SECRET, onPaymentPaid: () => {} });
    const res = await handle(new Request('http://localhost/', { method: 'GET' }));
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
  });
});

describe('createFetchHandler with a body already read', () => {
  it('answers RAW_BODY_UNAVAILABLE at once, with the fix, instead of failing as a bad signature', async () => {
    const logged: string[] = [];
    const logger = { warn: (_fields: unknown, message: string) => void logged.push(message), error: () => {} };
    const handle = createFetchHandler({ secret: SECRET, logger, onPaymentPaid: () => {} });
    const { body, headers } = signWebhook({ event: samplePaymentPaidEvent(), secret: SECRET });
    const request = new Request('http://localhost/', { method: 'POST', body, headers });
    await request.json();
    const res = await handle(request);
    expect(res.status).toBe(500);
    const answer = (await res.json()) as { error: string; message: string };
    expect(answer.error).toBe('RAW_BODY_UNAVAILABLE');
    expect(answer.message).toMatch(/no request\.json\(\)/);
    // The refusal at warn, and its fix once (a misconfiguration: every delivery would fail the same way).
    expect(logged.filter((m) => m.startsWith('Setup problem?'))).toHaveLength(1);
  });
});
