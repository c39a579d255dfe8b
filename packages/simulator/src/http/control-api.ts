import type { IncomingMessage, ServerResponse } from 'node:http';
import type { DeliveryState } from '../core/delivery-log.js';
import { SimulatorError } from '../core/errors.js';
import type { MerchantApiFaultOptions } from '../core/merchant-api-fault.js';
import type { FaultOptions } from '../core/options.js';
import type { DeliveryFaultOptions, PaymentAmendment, PayOptions } from '../core/pay-options.js';
import type { SimulatorCore, TestPaymentInput } from '../core/simulator-core.js';
import { parseJson, readBody, sendJson } from './http-io.js';

const MAX_BODY_BYTES = 64 * 1024;
/** List answers come in pages: at most this many items each (`?limit=`, default the same). */
export const MAX_PAGE = 1000;

/**
 * One page of a list, oldest first: the items after `?after=<id>` (none: from the start), at most `?limit=`
 * of them, and `next`, the id to pass as `after` for the following page (null on the last one).
 */
function page<T>(items: T[], idOf: (item: T) => string, query: URLSearchParams): { items: T[]; next: string | null } {
  const rawLimit = query.get('limit');
  const limit = rawLimit === null ? MAX_PAGE : Number(rawLimit);
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_PAGE)
    throw new SimulatorError('INVALID_OPTIONS', `limit must be a whole number from 1 to ${MAX_PAGE}.`);
  const after = query.get('after');
  let start = 0;
  if (after !== null) {
    const at = items.findIndex((item) => idOf(item) === after);
    if (at === -1)
      throw new SimulatorError(
        'INVALID_OPTIONS',
        `after=${JSON.stringify(after.slice(0, 64))} is not in the list (dropped, or never there).`,
      );
    start = at + 1;
  }
  const slice = items.slice(start, start + limit);
  const more = start + limit < items.length;
  return { items: slice, next: more && slice.length > 0 ? idOf(slice[slice.length - 1] as T) : null };
}
const PAYMENT = /^\/_simulator\/payments\/([^/]+)(?:\/(pay|expire|redeliver|amend))?$/;
const DELIVERY = /^\/_simulator\/deliveries\/([^/]+)$/;
const STATES: ReadonlySet<string> = new Set([
  'scheduled',
  'in-flight',
  'waiting-retry',
  'succeeded',
  'failed',
  'cancelled',
]);

/** What `GET /_simulator` answers: the simulator at a glance, without secrets. Also the dashboard's header. */
export function describeSimulator(core: SimulatorCore, url: string) {
  return {
    url,
    dashboard: `${url}/`,
    merchantApi: `${url}/v1/payments`,
    // Secrets stay out of HTTP answers even on loopback; the CLI prints them at start.
    merchants: [...core.o.merchants.values()].map(({ name, apiKey, confirmations }) => ({
      name,
      apiKey,
      confirmations,
    })),
    forwardTo: core.o.forwardTo,
    retry: core.o.retry,
    faults: core.faults,
    merchantApiFault: core.apiFaults.current,
    limits: core.o.limits,
    seed: core.o.seed,
    payments: core.store.size,
    pendingDeliveries: core.pendingDeliveries,
    retain: core.o.retain,
    dropped: { payments: core.store.dropped, deliveries: core.droppedDeliveries },
  };
}

/**
 * The control API under `/_simulator`: the core's helpers over HTTP, for a person with curl, the
 * dashboard, the CLI or a test in another process. Guarded by the server (Host check, control token; see
 * ControlAccess).
 */
export async function handleControlApi(
  core: SimulatorCore,
  url: string,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  query: URLSearchParams,
): Promise<void> {
  const method = req.method ?? '';
  const route = (...allowed: string[]) => {
    if (!allowed.includes(method))
      throw new SimulatorError('METHOD_NOT_ALLOWED', `${path} accepts ${allowed.join(', ')}, not ${method}.`);
  };
  const body = async () => parseJson(await readBody(req, MAX_BODY_BYTES));

  if (path === '/_simulator' || path === '/_simulator/') {
    route('GET');
    sendJson(res, 200, describeSimulator(core, url));
    return;
  }
  if (path === '/_simulator/payments') {
    route('GET', 'POST');
    if (method === 'GET') {
      const { items, next } = page(core.payments(), (p) => p.paymentId, query);
      sendJson(res, 200, { payments: items, next });
    } else sendJson(res, 201, core.createTestPayment((await body()) as TestPaymentInput | undefined));
    return;
  }
  const payment = PAYMENT.exec(path);
  if (payment !== null) {
    const [, paymentId = '', action] = payment;
    if (action === undefined) {
      route('GET');
      const found = core.payment(paymentId);
      if (found === undefined)
        throw new SimulatorError('PAYMENT_NOT_FOUND', `No payment ${JSON.stringify(paymentId)}.`);
      sendJson(res, 200, found);
      return;
    }
    route('POST');
    if (action === 'pay') sendJson(res, 200, await core.pay(paymentId, (await body()) as PayOptions | undefined));
    else if (action === 'expire') sendJson(res, 200, { payment: core.expire(paymentId) });
    else if (action === 'amend')
      sendJson(res, 200, { payment: core.amend(paymentId, (await body()) as PaymentAmendment) });
    else {
      const options = (await body()) as DeliveryFaultOptions | undefined;
      sendJson(res, 200, { deliveryIds: core.redeliver(paymentId, options) });
    }
    return;
  }
  if (path === '/_simulator/deliveries') {
    route('GET');
    const state = query.get('state') ?? undefined;
    if (state !== undefined && !STATES.has(state)) {
      throw new SimulatorError('INVALID_OPTIONS', `state must be one of ${[...STATES].join(', ')}.`);
    }
    const all = core.deliveries({
      paymentId: query.get('paymentId') ?? undefined,
      state: state as DeliveryState | undefined,
    });
    const { items, next } = page(all, (d) => d.deliveryId, query);
    sendJson(res, 200, { deliveries: items, next });
    return;
  }
  const delivery = DELIVERY.exec(path);
  if (delivery !== null) {
    route('GET');
    const found = core.delivery(delivery[1] as string);
    if (found === undefined)
      throw new SimulatorError('DELIVERY_NOT_FOUND', `No delivery ${JSON.stringify(delivery[1])}.`);
    sendJson(res, 200, found);
    return;
  }
  if (path === '/_simulator/faults') {
    route('GET', 'PUT');
    if (method === 'GET') sendJson(res, 200, core.faults);
    else sendJson(res, 200, core.setFaults(((await body()) ?? {}) as FaultOptions));
    return;
  }
  if (path === '/_simulator/merchant-api-fault') {
    route('GET', 'PUT', 'DELETE');
    if (method === 'PUT') {
      sendJson(res, 200, { fault: core.failMerchantApi((await body()) as MerchantApiFaultOptions) });
      return;
    }
    if (method === 'DELETE') core.apiFaults.clear();
    sendJson(res, 200, { fault: core.apiFaults.current });
    return;
  }
  if (path === '/_simulator/wait-idle') {
    route('POST');
    const raw = query.get('timeoutMs');
    const timeoutMs = raw === null ? 30_000 : Number(raw);
    if (!Number.isSafeInteger(timeoutMs) || timeoutMs < 0 || timeoutMs > 600_000) {
      throw new SimulatorError('INVALID_OPTIONS', 'timeoutMs must be a whole number of milliseconds from 0 to 600000.');
    }
    await core.waitForIdle(timeoutMs);
    sendJson(res, 200, { idle: true });
    return;
  }
  throw new SimulatorError('NOT_FOUND', `No control route ${method} ${path}; see the simulator README.`);
}
