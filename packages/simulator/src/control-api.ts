import type { IncomingMessage, ServerResponse } from 'node:http';
import type { DeliveryState } from './delivery-log.js';
import { SimulatorError } from './errors.js';
import { parseJson, readBody, sendJson } from './http-io.js';
import type { FaultOptions } from './options.js';
import type { DeliveryFaultOptions, PayOptions } from './pay-options.js';
import type { Simulator } from './simulator.js';

const MAX_BODY_BYTES = 64 * 1024;
const PAYMENT = /^\/_simulator\/payments\/([^/]+)(?:\/(pay|expire|redeliver))?$/;
const DELIVERY = /^\/_simulator\/deliveries\/([^/]+)$/;
const STATES: ReadonlySet<string> = new Set([
  'scheduled',
  'in-flight',
  'waiting-retry',
  'succeeded',
  'failed',
  'cancelled',
]);

/**
 * The control API under `/_simulator`: the programmatic helpers of `Simulator`, over HTTP, for a person
 * with curl or a test in another process. No authentication: the simulator listens on loopback.
 */
export async function handleControlApi(
  sim: Simulator,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  query: URLSearchParams,
): Promise<void> {
  const method = req.method ?? '';
  const route = (allowed: string) => {
    if (method !== allowed)
      throw new SimulatorError('METHOD_NOT_ALLOWED', `${path} accepts ${allowed}, not ${method}.`);
  };
  const body = async () => parseJson(await readBody(req, MAX_BODY_BYTES));

  if (path === '/_simulator' || path === '/_simulator/') {
    route('GET');
    sendJson(res, 200, {
      url: sim.url,
      merchantApi: `${sim.url}/v1/payments`,
      // Secrets stay out of HTTP answers even on loopback; the CLI prints them at start.
      merchants: sim.merchants.map(({ name, apiKey, confirmations }) => ({ name, apiKey, confirmations })),
      retry: sim.retry,
      faults: sim.faults,
      seed: sim.seed,
      payments: sim.payments().length,
      pendingDeliveries: sim.deliveries().filter((d) => !['succeeded', 'failed', 'cancelled'].includes(d.state)).length,
    });
    return;
  }
  if (path === '/_simulator/payments') {
    route('GET');
    sendJson(res, 200, { payments: sim.payments() });
    return;
  }
  const payment = PAYMENT.exec(path);
  if (payment !== null) {
    const [, paymentId = '', action] = payment;
    if (action === undefined) {
      route('GET');
      const found = sim.payment(paymentId);
      if (found === undefined)
        throw new SimulatorError('PAYMENT_NOT_FOUND', `No payment ${JSON.stringify(paymentId)}.`);
      sendJson(res, 200, found);
    } else if (action === 'pay') {
      route('POST');
      sendJson(res, 200, await sim.pay(paymentId, (await body()) as PayOptions | undefined));
    } else if (action === 'expire') {
      route('POST');
      sendJson(res, 200, { payment: sim.expire(paymentId) });
    } else {
      route('POST');
      const options = (await body()) as DeliveryFaultOptions | undefined;
      sendJson(res, 200, { deliveryIds: sim.redeliver(paymentId, options) });
    }
    return;
  }
  if (path === '/_simulator/deliveries') {
    route('GET');
    const state = query.get('state') ?? undefined;
    if (state !== undefined && !STATES.has(state)) {
      throw new SimulatorError('INVALID_OPTIONS', `state must be one of ${[...STATES].join(', ')}.`);
    }
    sendJson(res, 200, {
      deliveries: sim.deliveries({
        paymentId: query.get('paymentId') ?? undefined,
        state: state as DeliveryState | undefined,
      }),
    });
    return;
  }
  const delivery = DELIVERY.exec(path);
  if (delivery !== null) {
    route('GET');
    const found = sim.delivery(delivery[1] as string);
    if (found === undefined)
      throw new SimulatorError('DELIVERY_NOT_FOUND', `No delivery ${JSON.stringify(delivery[1])}.`);
    sendJson(res, 200, found);
    return;
  }
  if (path === '/_simulator/faults') {
    if (method === 'GET') {
      sendJson(res, 200, sim.faults);
      return;
    }
    route('PUT');
    sendJson(res, 200, sim.setFaults(((await body()) ?? {}) as FaultOptions));
    return;
  }
  if (path === '/_simulator/wait-idle') {
    route('POST');
    const raw = query.get('timeoutMs');
    const timeoutMs = raw === null ? 30_000 : Number(raw);
    if (!Number.isSafeInteger(timeoutMs) || timeoutMs < 0 || timeoutMs > 600_000) {
      throw new SimulatorError('INVALID_OPTIONS', 'timeoutMs must be a whole number of milliseconds from 0 to 600000.');
    }
    await sim.waitForIdle({ timeoutMs });
    sendJson(res, 200, { idle: true });
    return;
  }
  throw new SimulatorError('NOT_FOUND', `No control route ${method} ${path}; see the simulator README.`);
}
