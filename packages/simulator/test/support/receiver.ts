import type { IncomingHttpHeaders } from 'node:http';
import { createWebhookHandler, type PaymentPaidEvent, verifyWebhook, type WebhookLogger } from '@service-pay/core';
import { readBody, startServer, type TestServer } from '@service-pay/test-kit';

export interface Received {
  deliveryId: string;
  headers: IncomingHttpHeaders;
  body: string;
  status: number;
  answer: string;
  receivedAt: number;
}

export interface Receiver extends TestServer {
  /** Every request, in arrival order, with the answer given. */
  requests: Received[];
  /** Events the merchant's handler ran for (exactly once per payment when all is well). */
  handled: PaymentPaidEvent[];
}

/**
 * The merchant side as a shop builds it: core's createWebhookHandler behind a node:http server. It
 * verifies every delivery; anything it refuses shows up as a non-200 in `requests`.
 */
export async function startReceiver(options: {
  secret: string;
  toleranceSec?: number;
  /** Runs inside onPaymentPaid, before the event counts as handled. */
  work?: (event: PaymentPaidEvent) => Promise<void>;
  /** What the SDK logs; silent by default. */
  logger?: WebhookLogger;
}): Promise<Receiver> {
  const requests: Received[] = [];
  const handled: PaymentPaidEvent[] = [];
  const handle = createWebhookHandler({
    secret: options.secret,
    ...(options.toleranceSec === undefined ? {} : { toleranceSec: options.toleranceSec }),
    logger: options.logger ?? {
      debug: () => undefined,
      info: () => undefined,
      warn: () => undefined,
      error: () => undefined,
    },
    onPaymentPaid: async (event) => {
      await options.work?.(event);
      handled.push(event);
    },
  });
  const server = await startServer(async (req, res) => {
    const raw = await readBody(req);
    const answer = await handle({ method: req.method ?? '', headers: req.headers, rawBody: raw });
    requests.push({
      deliveryId: String(req.headers['x-service-delivery']),
      headers: req.headers,
      body: raw.toString('utf8'),
      status: answer.status,
      answer: answer.body,
      receivedAt: Date.now(),
    });
    res.writeHead(answer.status, answer.headers).end(answer.body);
  });
  return Object.assign(server, { requests, handled });
}

export type Script = (n: number) => { status: number } | 'hang' | 'reset';

/**
 * A receiver with a scripted answer per request (n counts from 1): a status, never answering, or a
 * reset connection. It still checks every delivery's signature with core's verifyWebhook, so a scripted
 * test also proves the simulator signs every retry correctly.
 */
export async function startScriptedReceiver(
  secret: string,
  script: Script,
): Promise<Receiver & { stats: { valid: number; invalid: number; abandoned: number } }> {
  const requests: Received[] = [];
  const state = { valid: 0, invalid: 0, abandoned: 0 };
  const server = await startServer(async (req, res) => {
    const raw = await readBody(req);
    await verifyWebhook({ rawBody: raw, headers: req.headers }, { secret }).then(
      () => (state.valid += 1),
      () => (state.invalid += 1),
    );
    const n = requests.length + 1;
    const step = script(n);
    const status = typeof step === 'object' ? step.status : 0;
    requests.push({
      deliveryId: String(req.headers['x-service-delivery']),
      headers: req.headers,
      body: raw.toString('utf8'),
      status,
      answer: '',
      receivedAt: Date.now(),
    });
    if (step === 'reset') req.socket.destroy();
    else if (step === 'hang')
      res.on('close', () => (state.abandoned += 1)); // the sender hung up on us
    else res.writeHead(step.status, { 'content-type': 'text/plain' }).end(`scripted ${step.status}`);
  });
  // `stats` is the live object (Object.assign would copy getters as frozen values).
  return Object.assign(server, { requests, handled: [], stats: state });
}
