import { Agent, createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { postWebhook } from '../src/core/post-webhook.js';

/**
 * A receiver whose answer to its n-th request (counted over every connection, from 1) is chosen by `answer`,
 * with the connections it accepted counted: enough to reset a kept-alive socket at a chosen request.
 */
async function receiver(answer: (n: number, req: IncomingMessage, res: ServerResponse) => void) {
  let requests = 0;
  let connections = 0;
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => answer(++requests, req, res));
  });
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: new URL(`http://127.0.0.1:${port}/webhooks`),
    counts: () => ({ requests, connections }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const ok = (res: ServerResponse) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0)) await f();
});

function agents() {
  const made = { http: new Agent({ keepAlive: true, maxSockets: 1 }), https: new HttpsAgent({ keepAlive: true }) };
  cleanup.push(() => {
    made.http.destroy();
    made.https.destroy();
  });
  return made;
}

async function post(url: URL, pool: ReturnType<typeof agents>) {
  return postWebhook(url, '{"event":"payment.paid"}', { 'content-type': 'application/json' }, 5_000, pool).result;
}

describe('postWebhook on a kept-alive socket the receiver closed', () => {
  it('sends a request reset on a reused socket again, once, on a new socket, within the same attempt', async () => {
    // The second request arrives on the first one's kept-alive socket, which the receiver drops unanswered,
    // as a server closing an idle socket does just as the request is written on it.
    const r = await receiver((n, req, res) => (n === 2 ? req.socket.destroy() : ok(res)));
    cleanup.push(r.close);
    const pool = agents();
    expect((await post(r.url, pool)).status).toBe(200);
    const second = await post(r.url, pool);
    expect(second).toMatchObject({ status: 200, responseBody: '{"ok":true}', error: null });
    expect(r.counts()).toEqual({ requests: 3, connections: 2 });
  });

  it('reports a reset on a new socket as a network error, without sending again', async () => {
    const r = await receiver((_n, req) => req.socket.destroy());
    cleanup.push(r.close);
    const first = await post(r.url, agents());
    expect(first.status).toBeNull();
    expect(first.error).toMatchObject({ kind: 'network', message: expect.stringContaining('ECONNRESET') });
    expect(r.counts()).toEqual({ requests: 1, connections: 1 });
  });

  it('sends again at most once: a second reset is the attempt failing', async () => {
    const r = await receiver((n, req, res) => (n === 1 ? ok(res) : req.socket.destroy()));
    cleanup.push(r.close);
    const pool = agents();
    await post(r.url, pool);
    const second = await post(r.url, pool);
    expect(second.error).toMatchObject({ kind: 'network' });
    expect(r.counts()).toEqual({ requests: 3, connections: 2 });
  });

  it('does not send again once an answer began: a cut answer is the attempt failing', async () => {
    const r = await receiver((n, req, res) => {
      if (n === 1) return ok(res);
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
      res.write('{"ok":');
      setImmediate(() => req.socket.destroy());
    });
    cleanup.push(r.close);
    const pool = agents();
    await post(r.url, pool);
    const second = await post(r.url, pool);
    expect(second).toMatchObject({ status: null, error: { kind: 'network' } });
    expect(r.counts()).toEqual({ requests: 2, connections: 1 });
  });
});
