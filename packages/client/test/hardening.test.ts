import { readBody, startServer, type TestServer } from '@service-pay/test-kit';
import { afterEach, describe, expect, it } from 'vitest';
import { createServiceClient, ServiceApiError } from '../src/index.js';
import { orderInput } from './support/order-input.js';

// Issue 26.5, the client's side. Before: a 300 MB answer was read whole (rss +325 MB), server messages
// were copied verbatim into ServiceApiError.message (newlines: a forged log line), http:// was silent.

const keys = { apiKey: 'ak_hardening', apiSecret: 'sk_hardening_secret' };
const servers: TestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function failure(promise: Promise<unknown>): Promise<ServiceApiError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ServiceApiError);
  return error as ServiceApiError;
}

describe('answer size', () => {
  it('a streamed answer past maxResponseBytes is cancelled, not buffered: RESPONSE_TOO_LARGE', async () => {
    let written = 0;
    let closedEarly = false;
    const server = await startServer(async (req, res) => {
      await readBody(req);
      res.writeHead(200, { 'content-type': 'application/json' }); // chunked: no length to check up front
      res.on('close', () => {
        closedEarly = !res.writableFinished;
      });
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      // Up to 300 MB, as fast as the client reads; stops when the client goes away.
      while (written < 300 * 1024 * 1024 && !res.destroyed) {
        written += chunk.length;
        if (!res.write(chunk)) await new Promise((resolve) => res.once('drain', resolve).once('close', resolve));
      }
      if (!res.destroyed) res.end();
    });
    servers.push(server);
    const client = createServiceClient({ baseUrl: server.url, ...keys, retry: false });
    const error = await failure(client.getPayment('p_big'));
    expect(error.code).toBe('RESPONSE_TOO_LARGE');
    expect(error.message).toMatch(/over maxResponseBytes \(1048576 bytes\)/);
    await expect.poll(() => closedEarly).toBe(true);
    // The server could get at most the limit plus what the sockets buffer in flight, never the 300 MB.
    expect(written).toBeLessThan(32 * 1024 * 1024);
  });

  it('a declared Content-Length past the limit is refused before reading; the option sets the limit', async () => {
    const body = JSON.stringify({ paymentId: 'p_1', status: 'PENDING', pad: 'x'.repeat(4000) });
    const server = await startServer(async (req, res) => {
      await readBody(req);
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(body.length) }).end(body);
    });
    servers.push(server);
    const small = createServiceClient({ baseUrl: server.url, ...keys, retry: false, maxResponseBytes: 2048 });
    expect((await failure(small.getPayment('p_1'))).code).toBe('RESPONSE_TOO_LARGE');
    const roomy = createServiceClient({ baseUrl: server.url, ...keys, retry: false, maxResponseBytes: 8192 });
    await expect(roomy.getPayment('p_1')).resolves.toMatchObject({ paymentId: 'p_1' });
    expect(() => createServiceClient({ baseUrl: server.url, ...keys, maxResponseBytes: 10 })).toThrow(
      /maxResponseBytes must be a whole number of bytes >= 1024/,
    );
  });
});

describe('messages from the server', () => {
  it('control characters never reach ServiceApiError.message (no forged log lines, no terminal escapes)', async () => {
    const forged = 'Bad amount.\n2026-11-25T00:00:00Z INFO payment p_1 credited\u001b[2J\r\u2028done';
    const server = await startServer(async (req, res) => {
      await readBody(req);
      res
        .writeHead(400, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: 'INVALID_AMOUNT', message: forged }));
    });
    servers.push(server);
    const client = createServiceClient({ baseUrl: server.url, ...keys, retry: false });
    const error = await failure(client.getPayment('p_1'));
    expect(error.code).toBe('INVALID_AMOUNT');
    for (const control of ['\n', '\r', '\u001b', '\u2028']) expect(error.message).not.toContain(control);
    expect(error.message).toContain('Bad amount. 2026-11-25T00:00:00Z INFO payment p_1 credited [2J done');
  });

  it('an error code that is not a plain identifier is not taken as one', async () => {
    const server = await startServer(async (req, res) => {
      await readBody(req);
      res.writeHead(502).end(JSON.stringify({ error: 'BAD\nCODE', message: 'x' }));
    });
    servers.push(server);
    const client = createServiceClient({ baseUrl: server.url, ...keys, retry: false });
    const error = await failure(client.getPayment('p_1'));
    expect(error.code).toBe('HTTP_ERROR');
    expect(error.message).not.toContain('\n');
  });
});

describe('plain http', () => {
  it('warns once per origin for http:// to another machine; never for loopback or https', async () => {
    const warnings: string[] = [];
    const listen = (warning: Error & { code?: string }) => {
      if (warning.code === 'SERVICE_PAY_INSECURE_BASE_URL') warnings.push(warning.message);
    };
    process.on('warning', listen);
    try {
      createServiceClient({ baseUrl: 'http://pay.example.com', ...keys });
      createServiceClient({ baseUrl: 'http://pay.example.com/api', ...keys });
      createServiceClient({ baseUrl: 'http://127.0.0.1:4010', ...keys });
      createServiceClient({ baseUrl: 'http://localhost:4010', ...keys });
      createServiceClient({ baseUrl: 'http://[::1]:4010', ...keys });
      createServiceClient({ baseUrl: 'https://pay.example.com', ...keys });
      await new Promise((resolve) => setImmediate(resolve)); // warnings are emitted on the next tick
      expect(warnings).toEqual([
        expect.stringMatching(/baseUrl http:\/\/pay\.example\.com is plain http to another machine/),
      ]);
    } finally {
      process.off('warning', listen);
    }
  });
});

describe('redirects', () => {
  // The second review: a 307 to another origin re-sent POST /v1/payments with the order to that origin.
  it.each([307, 308, 302, 301])(
    'regression: a %i to another origin is refused with REDIRECT_REFUSED, and the other origin receives nothing',
    async (status) => {
      const received: string[] = [];
      const elsewhere = await startServer(async (req, res) => {
        received.push(`${req.method} ${req.url} ${(await readBody(req)).toString()}`);
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"paymentId":"p_1","status":"PENDING"}');
      });
      servers.push(elsewhere);
      const service = await startServer(async (req, res) => {
        await readBody(req);
        res.writeHead(status, { location: `${elsewhere.url}${req.url}` }).end();
      });
      servers.push(service);
      const client = createServiceClient({ baseUrl: service.url, ...keys }); // retries on: a 3xx is not retried
      for (const call of [() => client.createPayment(orderInput), () => client.getPayment('p_1')]) {
        const error = await failure(call());
        expect(error.code).toBe('REDIRECT_REFUSED');
        expect(error.status).toBe(status);
        expect(error.attempts).toBe(1);
        expect(error.message).toContain(`another origin (${elsewhere.url})`);
      }
      expect(received).toEqual([]);
    },
  );

  it('a redirect to the same origin is refused too: the request is signed over its path', async () => {
    let requests = 0;
    const service = await startServer(async (req, res) => {
      requests++;
      await readBody(req);
      res.writeHead(307, { location: '/v2/payments' }).end();
    });
    servers.push(service);
    const client = createServiceClient({ baseUrl: service.url, ...keys });
    const error = await failure(client.createPayment(orderInput));
    expect(error.code).toBe('REDIRECT_REFUSED');
    expect(error.message).toMatch(/the same origin/);
    expect(requests).toBe(1);
  });
});
