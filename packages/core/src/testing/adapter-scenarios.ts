import type { PaymentPaidEvent } from '../event/payment-paid-event.js';
import { signWebhook } from '../sign/sign-webhook.js';
import type { ConformanceCase } from './conformance.js';
import { samplePaymentPaidEvent } from './sample-event.js';

/**
 * The secret every adapter under test is configured with.
 *
 * @example
 * ```ts
 * app.post('/webhook', serviceWebhook({ secret: ADAPTER_SCENARIO_SECRET, onPaymentPaid: recorder.onPaymentPaid }));
 * ```
 */
export const ADAPTER_SCENARIO_SECRET = 'whsec_adapter_scenarios_0123456789abcdef';

/**
 * A request as the scenarios send it. `body` is text (sent with its Content-Length) or chunks streamed
 * without one, the way a proxy or a hostile client may send a large body.
 *
 * @example
 * ```ts
 * const request: ScenarioRequest = { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' };
 * ```
 */
export interface ScenarioRequest {
  method: string;
  headers: Record<string, string>;
  body?: string | AsyncIterable<Uint8Array>;
  /** Send it to the route where a JSON body parser ran before the adapter (RAW_BODY_UNAVAILABLE case). */
  parsedFirst?: boolean;
}

/**
 * What came back, with lower-case header names.
 *
 * @example
 * ```ts
 * const response: ScenarioResponse = { status: 200, headers: {}, body: '{"received":true}' };
 * ```
 */
export interface ScenarioResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * One adapter, mounted in a real framework app whose `onPaymentPaid` is a `CreditRecorder`'s.
 *
 * @example
 * ```ts
 * const target: AdapterUnderTest = { send: fetchSender(url, '/webhook', '/parsed'), credits: recorder.credits, getReachesAdapter: true };
 * ```
 */
export interface AdapterUnderTest {
  send(request: ScenarioRequest): Promise<ScenarioResponse>;
  /** How many times `onPaymentPaid` completed for this payment. */
  credits(paymentId: string): number | Promise<number>;
  /**
   * Whether a GET reaches the adapter (`app.use`, Fastify's plugin, a Pages API route). When the framework
   * only routes POST to it (`app.post`, an App Router `export const POST`), the framework answers the GET.
   */
  getReachesAdapter: boolean;
  /** Text the RAW_BODY_UNAVAILABLE message must contain: the fix for this framework. */
  parsedBodyFix?: string;
  /**
   * `false` when the platform itself holds every answer until the request body has fully arrived (Next.js's
   * Edge runtime under `next start`): the early-413 case then checks the answer only, not its timing.
   */
  answersBeforeBodyEnds?: boolean;
}

/**
 * An `onPaymentPaid` that counts credits per payment, steered by the order number: `fail-once-*` throws on
 * its first run, `slow-*` takes 150 ms (so concurrent deliveries overlap).
 *
 * @example
 * ```ts
 * const recorder = createCreditRecorder();
 * app.post('/webhook', serviceWebhook({ secret: ADAPTER_SCENARIO_SECRET, onPaymentPaid: recorder.onPaymentPaid }));
 * ```
 */
export interface CreditRecorder {
  onPaymentPaid(event: PaymentPaidEvent): Promise<void>;
  credits(paymentId: string): number;
}

/**
 * Makes a `CreditRecorder` (see its description for the order-number conventions).
 *
 * @example
 * ```ts
 * const { onPaymentPaid, credits } = createCreditRecorder();
 * ```
 */
export function createCreditRecorder(): CreditRecorder {
  const credited = new Map<string, number>();
  const failed = new Set<string>();
  return {
    async onPaymentPaid(event) {
      if (event.orderNo.startsWith('fail-once-') && !failed.has(event.paymentId)) {
        failed.add(event.paymentId);
        throw new Error('scenario: the first run of this payment fails');
      }
      if (event.orderNo.startsWith('slow-')) await sleep(150);
      credited.set(event.paymentId, (credited.get(event.paymentId) ?? 0) + 1);
    },
    credits: (paymentId) => credited.get(paymentId) ?? 0,
  };
}

/**
 * Sends scenario requests with `fetch` to `baseUrl + path` (or `parsedPath` for `parsedFirst`), streaming
 * iterable bodies with `duplex: 'half'` so the answer can arrive while the body is still being sent.
 *
 * @example
 * ```ts
 * const send = fetchSender('http://127.0.0.1:3000', '/api/webhook', '/api/webhook-parsed');
 * ```
 */
export function fetchSender(baseUrl: string, path: string, parsedPath = path): AdapterUnderTest['send'] {
  return async (request) => {
    const url = new URL(request.parsedFirst ? parsedPath : path, baseUrl);
    const body = typeof request.body === 'string' || request.body === undefined ? request.body : toStream(request.body);
    const init: RequestInit & { duplex?: 'half' } = { method: request.method, headers: request.headers };
    if (body !== undefined) init.body = body;
    if (body instanceof ReadableStream) init.duplex = 'half';
    const response = await fetch(url, init);
    const headers: Record<string, string> = {};
    response.headers.forEach((value, name) => {
      headers[name] = value;
    });
    return { status: response.status, headers, body: await response.text() };
  };
}

/**
 * Every situation a framework adapter must hand to the core unchanged, as framework-neutral cases. Express,
 * Fastify (inject and a real listen) and Next.js (a built app) all run this one list.
 *
 * @example
 * ```ts
 * import { describe, it } from 'vitest';
 * import { adapterScenarios } from '@service-pay/core/testing';
 *
 * describe('my adapter', () => {
 *   for (const c of adapterScenarios(target)) it(c.name, c.run);
 * });
 * ```
 */
export function adapterScenarios(target: AdapterUnderTest): ConformanceCase[] {
  const send = (request: ScenarioRequest) => target.send(request);
  const credits = async (paymentId: string) => await target.credits(paymentId);
  const MiB = 1024 * 1024;

  return [
    {
      name: 'a valid delivery is answered 200 and handled once',
      run: async () => {
        const { request, event } = delivery();
        const response = await send(request);
        expectAnswer(response, 200, { received: true });
        equal(await credits(event.paymentId), 1, 'credits');
      },
    },
    {
      name: 'the same delivery again is answered 200 duplicate and not handled again',
      run: async () => {
        const { request, event } = delivery();
        expectAnswer(await send(request), 200, { received: true });
        expectAnswer(await send(request), 200, { received: true, duplicate: true });
        equal(await credits(event.paymentId), 1, 'credits');
      },
    },
    {
      name: '10 concurrent identical deliveries run the handler exactly once',
      run: async () => {
        const { request, event } = delivery({ orderNo: `slow-${Math.random().toString(36).slice(2)}` });
        const responses = await Promise.all(Array.from({ length: 10 }, () => send(request)));
        const firsts = responses.filter((r) => r.status === 200 && r.body === '{"received":true}').length;
        equal(firsts, 1, 'deliveries answered as the first');
        for (const r of responses) {
          if (r.status !== 200 && r.status !== 409) throw new Error(`expected 200 or 409, got ${r.status} ${r.body}`);
          if (r.status === 409) expectError(r, 409, 'DELIVERY_IN_PROGRESS');
        }
        equal(await credits(event.paymentId), 1, 'credits');
      },
    },
    {
      name: 'a tampered body is answered 401 and not handled',
      run: async () => {
        const { request, event } = delivery();
        const tampered = (request.body as string).replace('"12.50"', '"99.50"');
        if (tampered === request.body) throw new Error('scenario bug: nothing was tampered');
        expectError(await send({ ...request, body: tampered }), 401, 'SIGNATURE_MISMATCH');
        equal(await credits(event.paymentId), 0, 'credits');
      },
    },
    {
      name: 'a stale timestamp is answered 401 and not handled',
      run: async () => {
        const { request, event } = delivery({}, Math.floor(Date.now() / 1000) - 3600);
        expectError(await send(request), 401, 'TIMESTAMP_OUT_OF_TOLERANCE');
        equal(await credits(event.paymentId), 0, 'credits');
      },
    },
    {
      name: 'a GET is answered 405',
      run: async () => {
        const { request } = delivery();
        const response = await send({
          method: 'GET',
          headers: { 'x-service-signature': request.headers['x-service-signature'] as string },
        });
        if (target.getReachesAdapter) {
          expectError(response, 405, 'METHOD_NOT_ALLOWED');
          equal(response.headers.allow, 'POST', 'Allow header');
        } else if (response.status !== 405 && response.status !== 404) {
          throw new Error(`expected the framework's 404 or 405 for a GET, got ${response.status}`);
        }
      },
    },
    {
      name: 'a text/plain body is answered 415 and not handled',
      run: async () => {
        const { request, event } = delivery();
        const response = await send({ ...request, headers: { ...request.headers, 'content-type': 'text/plain' } });
        expectError(response, 415, 'UNSUPPORTED_MEDIA_TYPE');
        equal(await credits(event.paymentId), 0, 'credits');
      },
    },
    {
      name: 'a 1 MiB body with its Content-Length is answered 413',
      run: async () => {
        const { request } = delivery();
        const body = `{"pad":"${'x'.repeat(MiB)}"}`;
        expectError(await send({ ...request, body }), 413, 'BODY_TOO_LARGE');
      },
    },
    {
      name: 'a 1 MiB streamed body is answered 413 before the client has sent it all',
      run: async () => {
        const { request } = delivery();
        // The body pauses after 256 KiB until the answer is in (or 10 s passed): an adapter that buffers the
        // whole body before answering makes this client send all of it, and the count below shows it.
        const early = target.answersBeforeBodyEnds !== false;
        const attempt = async () => {
          const metered = meteredBody(MiB, 16 * 1024, early ? 256 * 1024 : MiB);
          try {
            const response = await send({ ...request, body: metered.chunks });
            return { response, sentBeforeAnswer: metered.sent() };
          } finally {
            metered.release();
          }
        };
        // A server that answers early and closes resets the connection while the client still sends; fetch
        // (undici) can then fail the request instead of reading the answer that already arrived,
        // a race a loaded machine loses now and then. One more try tells that race
        // from an adapter that never answers: the second is as bounded as the first.
        const { response, sentBeforeAnswer } = await attempt().catch((error: unknown) => {
          if (!resetWhileSending(error)) throw error;
          return attempt();
        });
        expectError(response, 413, 'BODY_TOO_LARGE');
        if (early && sentBeforeAnswer >= MiB) {
          throw new Error(`the adapter answered only after the whole body (${sentBeforeAnswer} bytes) was sent`);
        }
      },
    },
    {
      name: 'a handler that throws is answered 500, and the retry 200 with one credit',
      run: async () => {
        const { request, event } = delivery({ orderNo: `fail-once-${Math.random().toString(36).slice(2)}` });
        expectError(await send(request), 500, 'HANDLER_FAILED');
        equal(await credits(event.paymentId), 0, 'credits after the failure');
        expectAnswer(await send(request), 200, { received: true });
        equal(await credits(event.paymentId), 1, 'credits after the retry');
      },
    },
    {
      name: 'an already-parsed body is answered RAW_BODY_UNAVAILABLE with the fix',
      run: async () => {
        const { request, event } = delivery();
        const response = await send({ ...request, parsedFirst: true });
        expectError(response, 500, 'RAW_BODY_UNAVAILABLE');
        const { message } = JSON.parse(response.body) as { message: string };
        if (target.parsedBodyFix !== undefined && !message.includes(target.parsedBodyFix)) {
          throw new Error(
            `expected the message to contain ${JSON.stringify(target.parsedBodyFix)}, got ${JSON.stringify(message)}`,
          );
        }
        equal(await credits(event.paymentId), 0, 'credits');
      },
    },
  ];
}

function delivery(
  overrides: Partial<PaymentPaidEvent> = {},
  timestamp?: number,
): { request: ScenarioRequest; event: PaymentPaidEvent } {
  const event = samplePaymentPaidEvent(overrides);
  const signed = signWebhook(
    timestamp === undefined
      ? { event, secret: ADAPTER_SCENARIO_SECRET }
      : { event, secret: ADAPTER_SCENARIO_SECRET, timestamp },
  );
  return { request: { method: 'POST', headers: signed.headers, body: signed.body }, event };
}

/** The request failed because the server closed the connection while its body was still being sent. */
function resetWhileSending(error: unknown): boolean {
  const code = (error as { cause?: { code?: unknown } } | undefined)?.cause?.code;
  return code === 'EPIPE' || code === 'ECONNRESET' || code === 'UND_ERR_SOCKET';
}

/** `total` bytes in chunks that count what was taken, pausing once at `pauseAt` until `release()` (or 10 s). */
function meteredBody(total: number, chunkSize: number, pauseAt: number) {
  let sent = 0;
  let release!: () => void;
  const released = new Promise<'released'>((resolve) => {
    release = () => resolve('released');
  });
  async function* chunks(): AsyncGenerator<Uint8Array> {
    const chunk = new Uint8Array(chunkSize).fill(0x20);
    let paused = false;
    while (sent < total) {
      if (sent >= pauseAt && !paused) {
        paused = true;
        let timer: ReturnType<typeof setTimeout> | undefined;
        const outcome = await Promise.race([released, new Promise((r) => (timer = setTimeout(r, 10_000, 'timeout')))]);
        clearTimeout(timer);
        if (outcome === 'released') return;
      }
      sent += chunk.byteLength;
      yield chunk;
    }
  }
  return { chunks: chunks(), sent: () => sent, release };
}

function toStream(chunks: AsyncIterable<Uint8Array>): ReadableStream<Uint8Array> {
  const iterator = chunks[Symbol.asyncIterator]();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await iterator.next();
      if (done) controller.close();
      else controller.enqueue(value);
    },
    async cancel() {
      await iterator.return?.();
    },
  });
}

function expectAnswer(response: ScenarioResponse, status: number, body: Record<string, unknown>): void {
  if (response.status !== status || JSON.stringify(safeJson(response.body)) !== JSON.stringify(body)) {
    throw new Error(
      `expected ${status} ${JSON.stringify(body)}, got ${response.status} ${response.body.slice(0, 300)}`,
    );
  }
}

function expectError(response: ScenarioResponse, status: number, code: string): void {
  const parsed = safeJson(response.body) as { error?: unknown } | undefined;
  if (response.status !== status || parsed?.error !== code) {
    throw new Error(`expected ${status} ${code}, got ${response.status} ${response.body.slice(0, 300)}`);
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function equal(actual: unknown, expected: unknown, what: string): void {
  if (actual !== expected) throw new Error(`${what}: expected ${String(expected)}, got ${String(actual)}`);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
