import type { IncomingMessage, ServerResponse } from 'node:http';
import { ServiceApiError, verifyApiRequest } from '@service-pay/client';
import { SimulatorError } from '../core/errors.js';
import type { SimulatorCore } from '../core/simulator-core.js';
import { parseJson, readBody, sendError, sendJson } from './http-io.js';

const MAX_BODY_BYTES = 64 * 1024;
const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;
const PAYMENT_PATH = /^\/v1\/payments\/([^/]+)$/;

/**
 * The merchant API of spec section 4: `POST /v1/payments` and `GET /v1/payments/:paymentId`, each
 * authenticated per spec 5.1. Order of checks: route, body size, injected fault, signature, content type,
 * JSON, fields.
 */
export async function handleMerchantApi(
  core: SimulatorCore,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
): Promise<void> {
  const method = req.method ?? '';
  const isCollection = path === '/v1/payments';
  const item = PAYMENT_PATH.exec(path);
  if (!isCollection && item === null) throw new SimulatorError('NOT_FOUND', `No route ${method} ${path}.`);
  const allowed = isCollection ? 'POST' : 'GET';
  if (method !== allowed) {
    sendError(res, new SimulatorError('METHOD_NOT_ALLOWED', `${path} accepts ${allowed}, not ${method}.`), {
      allow: allowed,
    });
    return;
  }

  const rawBody = await readBody(req, MAX_BODY_BYTES);
  // Before authentication, as a load balancer or rate limiter in front of the real service would answer.
  const refusal = core.apiFaults.take(method);
  if (refusal !== undefined) {
    sendError(res, refusal.error, refusal.headers);
    return;
  }
  let apiKey: string;
  try {
    ({ apiKey } = await verifyApiRequest(
      { method, path: req.url ?? path, headers: req.headers, rawBody },
      { getApiSecret: (key) => core.o.merchants.get(key)?.apiSecret, now: core.o.now },
    ));
  } catch (error) {
    if (error instanceof ServiceApiError) throw new SimulatorError('UNAUTHORIZED', error.message);
    throw error;
  }
  const merchant = core.o.merchants.get(apiKey)!;

  if (item !== null) {
    const record = core.store.get(item[1] as string);
    // Another merchant's payment is reported exactly like a missing one: ids must not leak across merchants.
    if (record === undefined || record.merchant !== merchant) {
      throw new SimulatorError('PAYMENT_NOT_FOUND', `No payment ${JSON.stringify(item[1])} for this merchant.`);
    }
    sendJson(res, 200, core.store.view(record));
    return;
  }

  if (!JSON_TYPE.test(req.headers['content-type'] ?? '')) {
    throw new SimulatorError('UNSUPPORTED_MEDIA_TYPE', 'POST /v1/payments needs Content-Type: application/json.');
  }
  sendJson(res, 201, core.createPayment(merchant, parseJson(rawBody)));
}
