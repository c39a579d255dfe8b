import type { IncomingMessage, ServerResponse } from 'node:http';
import { type CreatePaymentInput, checkPaymentInput, ServiceApiError, verifyApiRequest } from '@service-pay/client';
import { SimulatorError } from './errors.js';
import { parseJson, readBody, sendError, sendJson } from './http-io.js';
import type { ResolvedOptions } from './options.js';
import type { PaymentStore } from './payment-store.js';

const MAX_BODY_BYTES = 64 * 1024;
const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;
const PAYMENT_PATH = /^\/v1\/payments\/([^/]+)$/;

/**
 * The merchant API of spec section 4: `POST /v1/payments` and `GET /v1/payments/:paymentId`, each
 * authenticated per spec 5.1. Order of checks: route, body size, signature, content type, JSON, fields.
 */
export async function handleMerchantApi(
  o: ResolvedOptions,
  store: PaymentStore,
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
  let apiKey: string;
  try {
    ({ apiKey } = await verifyApiRequest(
      { method, path: req.url ?? path, headers: req.headers, rawBody },
      { getApiSecret: (key) => o.merchants.get(key)?.apiSecret, now: o.now },
    ));
  } catch (error) {
    if (error instanceof ServiceApiError) throw new SimulatorError('UNAUTHORIZED', error.message);
    throw error;
  }
  const merchant = o.merchants.get(apiKey)!;

  if (item !== null) {
    const record = store.get(item[1] as string);
    // Another merchant's payment is reported exactly like a missing one: ids must not leak across merchants.
    if (record === undefined || record.merchant !== merchant) {
      throw new SimulatorError('PAYMENT_NOT_FOUND', `No payment ${JSON.stringify(item[1])} for this merchant.`);
    }
    sendJson(res, 200, store.view(record));
    return;
  }

  if (!JSON_TYPE.test(req.headers['content-type'] ?? '')) {
    throw new SimulatorError('UNSUPPORTED_MEDIA_TYPE', 'POST /v1/payments needs Content-Type: application/json.');
  }
  const input = parseJson(rawBody);
  const problems = checkPaymentInput(input);
  const first = problems[0];
  if (first !== undefined) {
    const more =
      problems.length > 1
        ? ` Also: ${problems
            .slice(1)
            .map((p) => p.message)
            .join(' ')}`
        : '';
    throw new SimulatorError(first.code, `${first.message}${more}`);
  }
  const payment = input as CreatePaymentInput;
  const decimals = o.tokenDecimals[payment.tokenSymbol] ?? 18;
  const fraction = payment.amount.split('.')[1] ?? '';
  if (fraction.length > decimals) {
    throw new SimulatorError(
      'INVALID_AMOUNT',
      `amount "${payment.amount}" has more fraction digits than ${payment.tokenSymbol} has decimals (${decimals}).`,
    );
  }
  sendJson(res, 201, store.view(store.create(merchant, payment)));
}
