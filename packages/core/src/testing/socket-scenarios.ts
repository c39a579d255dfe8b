import { once } from 'node:events';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { connect, type Socket } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { signWebhook } from '../sign/sign-webhook.js';
import { ADAPTER_SCENARIO_SECRET } from './adapter-scenarios.js';
import type { ConformanceCase } from './conformance.js';
import { samplePaymentPaidEvent } from './sample-event.js';

/**
 * A log line as a test collected it, whichever logger wrote it (pino, `request.log`, the console).
 *
 * @example
 * ```ts
 * const line: CollectedLogLine = { level: 'warn', message: 'Refused a delivery: ...', fields: { code: 'SIGNATURE_MISMATCH', status: 401 } };
 * ```
 */
export interface CollectedLogLine {
  level: 'debug' | 'info' | 'warn' | 'error';
  message: string;
  fields: Record<string, unknown>;
}

/**
 * An adapter on a real listening Node server, configured with `ADAPTER_SCENARIO_SECRET`, a handler that
 * resolves, and the default `maxBodyBytes` (64 KiB).
 *
 * @example
 * ```ts
 * const target: SocketTarget = { server, path: '/webhooks/service', logs: () => lines };
 * ```
 */
export interface SocketTarget {
  /** The listening server (Express's `http.Server`, Fastify's `app.server`, ...). */
  server: Server;
  path: string;
  /** Every log line the app wrote so far: the SDK's and, where they share a logger, the framework's. */
  logs(): CollectedLogLine[];
  /** Called with the figures each case measured (bytes, memory), for a report. */
  report?(name: string, figures: Record<string, number>): void;
  /**
   * The adapter's `bodyTimeoutMs`, when the test set a short one: then the slow-clients case runs (300
   * connections that stop mid-body, each waiting that long for its 408).
   */
  bodyTimeoutMs?: number;
}

const MB = 1024 * 1024;

/**
 * What a hostile or broken network does to a webhook endpoint, over real sockets: 1,000 clients that reset
 * the connection mid-body, and a 100 MB upload with and without Content-Length. Each case checks that the
 * adapter writes nothing to a gone client, logs resets at debug only and rate-limited, stops reading a body over the limit
 * (the client still gets its 413, then the connection closes), keeps memory bounded, and still answers a
 * valid delivery afterwards. Run by every Node adapter.
 *
 * @example
 * ```ts
 * import { describe, it } from 'vitest';
 * import { socketScenarios } from '@service-pay/core/testing';
 *
 * describe('my adapter on real sockets', () => {
 *   for (const c of socketScenarios(target)) it(c.name, c.run, 60_000);
 * });
 * ```
 */
export function socketScenarios(target: SocketTarget): ConformanceCase[] {
  return [
    ...(target.bodyTimeoutMs === undefined ? [] : [slowClientsCase(target, target.bodyTimeoutMs)]),
    {
      name: '1,000 resets mid-body: logged at debug and rate-limited, never answered, memory bounded, and the server keeps answering',
      run: async () => {
        const watch = watchServer(target.server);
        const before = target.logs().length;
        const resets = 1000;
        const concurrency = 20;
        await settle();
        const heapBefore = heapUsed();
        let next = 0;
        await Promise.all(
          Array.from({ length: concurrency }, async () => {
            while (next < resets) {
              next++;
              await resetMidBody(target, watch);
            }
          }),
        );
        await waitFor(() => watch.requests === resets && watch.open === 0, 'every reset request to end');
        await settle();
        const heapGrowth = heapUsed() - heapBefore;
        watch.stop();
        const lines = target.logs().slice(before);
        const loud = lines.filter((l) => l.level === 'warn' || l.level === 'error');
        if (loud.length > 0) throw new Error(`resets were logged above debug: ${JSON.stringify(loud.slice(0, 3))}`);
        const disconnects = lines.filter((l) => l.level === 'debug' && l.fields.code === 'CLIENT_DISCONNECTED');
        // Rate-limited: the first of each 10 s window (which an earlier case may have opened), and a count
        // when a window closes. However slow the machine, 1,000 resets never take a minute: 12 lines at most.
        const logged = target.logs().some((l) => l.level === 'debug' && l.fields.code === 'CLIENT_DISCONNECTED');
        if (!logged || disconnects.length > 12) {
          throw new Error(
            `expected 1,000 resets logged at debug in at most 12 lines (rate-limited), got ${disconnects.length}`,
          );
        }
        if (watch.writesToGone > 0) throw new Error(`${watch.writesToGone} answers were written to a gone client`);
        target.report?.('1,000 resets mid-body', { heapGrowthMB: heapGrowth / MB });
        if (heapGrowth > 16 * MB) throw new Error(`the heap grew by ${(heapGrowth / MB).toFixed(1)} MB`);
        await expectValidDeliveryAnswered(target);
      },
    },
    ...[true, false].map(
      (withLength): ConformanceCase => ({
        name: `a 100 MB body ${withLength ? 'with its Content-Length' : 'sent chunked (no Content-Length)'}: the client reads a 413, then the server closes the connection: no draining, memory bounded`,
        run: async () => {
          const watch = watchServer(target.server);
          await settle();
          const heapBefore = heapUsed();
          const rssBefore = process.memoryUsage().rss;
          const upload = await uploadHuge(target, 100 * MB, withLength);
          await waitFor(() => watch.open === 0, 'the connection to close');
          const rssGrowth = process.memoryUsage().rss - rssBefore;
          await settle();
          const heapGrowth = heapUsed() - heapBefore;
          watch.stop();
          target.report?.(`100 MB ${withLength ? 'with Content-Length' : 'chunked'}`, {
            serverReadMB: watch.bytesRead / MB,
            clientSentMB: upload.sent / MB,
            rssGrowthMB: rssGrowth / MB,
            heapGrowthMB: heapGrowth / MB,
          });
          const [statusLine = '', ...rest] = upload.answer.split('\r\n');
          if (!statusLine.startsWith('HTTP/1.1 413 ') || !rest.join('\n').includes('BODY_TOO_LARGE')) {
            throw new Error(`expected the client to read a 413 BODY_TOO_LARGE, got ${JSON.stringify(upload.answer)}`);
          }
          if (upload.sent >= 100 * MB) throw new Error('the server let the client send the whole 100 MB');
          // The server reads what was in flight when it answered, never the whole upload.
          if (watch.bytesRead > 16 * MB) {
            throw new Error(`the server read ${(watch.bytesRead / MB).toFixed(1)} MB of a body it refused`);
          }
          if (rssGrowth > 64 * MB) throw new Error(`the RSS grew by ${(rssGrowth / MB).toFixed(1)} MB`);
          if (heapGrowth > 16 * MB) throw new Error(`the heap grew by ${(heapGrowth / MB).toFixed(1)} MB`);
          await expectValidDeliveryAnswered(target);
        },
      }),
    ),
  ];
}

/**
 * 300 clients that send the head of a delivery and a few bytes of its body, then nothing: each must get
 * 408 BODY_TIMEOUT and have its connection closed by the server, about `bodyTimeoutMs` after it began, the
 * refusals logged once (rate-limited), and the server must answer a valid delivery afterwards.
 */
function slowClientsCase(target: SocketTarget, bodyTimeoutMs: number): ConformanceCase {
  const clients = 300;
  return {
    name: `${clients} slow clients that stop mid-body: each gets 408 BODY_TIMEOUT after bodyTimeoutMs and its connection closed`,
    run: async () => {
      const watch = watchServer(target.server);
      const before = target.logs().length;
      const started = Date.now();
      const answers = await Promise.all(Array.from({ length: clients }, () => stallMidBody(target, bodyTimeoutMs)));
      const allClosedMs = Date.now() - started;
      await waitFor(() => watch.open === 0, 'every slow connection to close');
      watch.stop();
      const refused = answers.filter((a) => a.startsWith('HTTP/1.1 408 ') && a.includes('BODY_TIMEOUT')).length;
      target.report?.(`${clients} slow clients`, { clients, answered408: refused, allClosedMs, bodyTimeoutMs });
      if (refused !== clients) {
        const other = answers.find((a) => !a.startsWith('HTTP/1.1 408 '));
        throw new Error(`${clients - refused} of ${clients} slow clients got no 408; one got ${JSON.stringify(other)}`);
      }
      const warns = target
        .logs()
        .slice(before)
        .filter((l) => l.level === 'warn' && l.fields.code === 'BODY_TIMEOUT');
      if (warns.length < 1 || warns.length > 2) {
        throw new Error(`expected the 408s logged once at warn (rate-limited), got ${warns.length} lines`);
      }
      await expectValidDeliveryAnswered(target);
    },
  };
}

/** Sends a delivery's head and 10 bytes of its body, then waits for the server to answer and close. */
function stallMidBody(target: SocketTarget, bodyTimeoutMs: number): Promise<string> {
  const { port } = target.server.address() as { port: number };
  const { headers } = signWebhook({ event: samplePaymentPaidEvent(), secret: ADAPTER_SCENARIO_SECRET });
  const head = Object.entries({ ...headers, 'content-length': '4096' })
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let answer = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(
        new Error(
          `a slow connection was still open ${bodyTimeoutMs + 15_000} ms later; it read ${JSON.stringify(answer)}`,
        ),
      );
    }, bodyTimeoutMs + 15_000);
    socket.setEncoding('latin1');
    socket.on('data', (text: string) => {
      answer += text;
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(answer);
    });
    socket.write(`POST ${target.path} HTTP/1.1\r\nhost: 127.0.0.1\r\n${head}\r\n{"event":"`);
  });
}

/** Counts what the server does while a case runs: requests, bytes read, answers written to a gone client. */
function watchServer(server: Server) {
  const state = {
    requests: 0,
    open: 0,
    bytesRead: 0,
    writesToGone: 0,
    /** Called when the request from this client port reached the server. */
    arrivals: new Map<number, () => void>(),
    stop: () => {},
  };
  const onConnection = (socket: Socket) => {
    state.open++;
    socket.once('close', () => {
      state.open--;
      state.bytesRead += socket.bytesRead;
    });
  };
  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    state.requests++;
    state.arrivals.get(req.socket.remotePort ?? 0)?.();
    // Any attempt to answer once the client is gone counts, whichever of these the framework uses.
    for (const method of ['writeHead', 'write', 'end'] as const) {
      const original = res[method] as (...args: unknown[]) => unknown;
      res[method] = function (this: ServerResponse, ...args: unknown[]) {
        if (this.destroyed) state.writesToGone++;
        return original.apply(this, args);
      } as never;
    }
  };
  server.on('connection', onConnection);
  server.on('request', onRequest);
  state.stop = () => {
    server.removeListener('connection', onConnection);
    server.removeListener('request', onRequest);
  };
  return state;
}

/** Sends the head of a signed delivery and part of its body, waits until the server has the request, then resets. */
async function resetMidBody(target: SocketTarget, watch: ReturnType<typeof watchServer>): Promise<void> {
  const { port } = target.server.address() as { port: number };
  const { headers } = signWebhook({ event: samplePaymentPaidEvent(), secret: ADAPTER_SCENARIO_SECRET });
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => {});
  await once(socket, 'connect');
  const localPort = socket.localPort ?? 0;
  const arrived = new Promise<void>((resolve) => watch.arrivals.set(localPort, resolve));
  const head = Object.entries({ ...headers, 'content-length': '4096' })
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  socket.write(`POST ${target.path} HTTP/1.1\r\nhost: 127.0.0.1\r\n${head}\r\n{"event":"payment.paid","pad":"`);
  await arrived;
  watch.arrivals.delete(localPort);
  // One turn later the adapter is reading the body; the reset lands mid-body.
  await new Promise((resolve) => setImmediate(resolve));
  socket.resetAndDestroy();
  await once(socket, 'close');
}

/**
 * Uploads `total` bytes as a stubborn client: it reads whatever the server answers while it writes (as
 * fetch, curl and Node's http do), but never stops writing on its own, so only the server can end the
 * upload early: by closing the connection. Resolves, once the connection is gone, with what it read and
 * how much it had sent.
 */
function uploadHuge(target: SocketTarget, total: number, withLength: boolean) {
  const { port } = target.server.address() as { port: number };
  const { headers } = signWebhook({ event: samplePaymentPaidEvent(), secret: ADAPTER_SCENARIO_SECRET });
  const framing = withLength ? { 'content-length': String(total) } : { 'transfer-encoding': 'chunked' };
  const head = Object.entries({ ...headers, ...framing })
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  const chunk = new Uint8Array(64 * 1024).fill(0x20);
  const encoder = new TextEncoder();
  const piece = withLength
    ? chunk
    : Uint8Array.from([...encoder.encode(`${chunk.byteLength.toString(16)}\r\n`), ...chunk, 13, 10]);
  return new Promise<{ answer: string; sent: number }>((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let answer = '';
    let sent = 0;
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`the connection was still open after 30 s and ${sent} bytes`));
    }, 30_000);
    socket.setEncoding('latin1');
    socket.on('data', (text: string) => {
      answer += text;
    });
    // EPIPE or ECONNRESET once the server has closed: expected, the answer was read before.
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ answer, sent });
    });
    socket.write(`POST ${target.path} HTTP/1.1\r\nhost: 127.0.0.1\r\n${head}\r\n`);
    const pump = () => {
      while (!socket.destroyed && sent < total) {
        sent += chunk.byteLength;
        if (!socket.write(piece)) return void socket.once('drain', pump);
      }
      if (!socket.destroyed) socket.end(withLength ? '' : '0\r\n\r\n');
    };
    pump();
  });
}

async function expectValidDeliveryAnswered(target: SocketTarget): Promise<void> {
  const { port } = target.server.address() as { port: number };
  const { body, headers } = signWebhook({ event: samplePaymentPaidEvent(), secret: ADAPTER_SCENARIO_SECRET });
  const response = await fetch(`http://127.0.0.1:${port}${target.path}`, { method: 'POST', headers, body });
  const text = await response.text();
  if (response.status !== 200 || text !== '{"received":true}') {
    throw new Error(`after the abuse, a valid delivery got ${response.status} ${text}`);
  }
}

let collectGarbage: (() => void) | undefined;

/** The heap in use after a full collection (V8's `gc`, switched on for this process if it is not yet). */
function heapUsed(): number {
  if (collectGarbage === undefined) {
    setFlagsFromString('--expose-gc');
    collectGarbage = runInNewContext('gc') as () => void;
  }
  collectGarbage();
  return process.memoryUsage().heapUsed;
}

/** Lets timers and sockets of the previous step finish, so a measurement sees a quiet process. */
async function settle(): Promise<void> {
  for (let i = 0; i < 3; i++) await sleep(20);
}

async function waitFor(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (condition()) return;
    await sleep(10);
  }
  throw new Error(`timed out waiting for ${what}`);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
