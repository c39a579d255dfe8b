import type { WebhookErrorCode } from '../errors/error-codes.js';
import { signWebhook } from '../sign/sign-webhook.js';
import { ADAPTER_SCENARIO_SECRET, type ScenarioRequest } from './adapter-scenarios.js';
import { samplePaymentPaidEvent } from './sample-event.js';

/**
 * One request the handler refuses, with the code and status it must be answered and logged with, and the
 * pieces of it that must never reach a log line.
 *
 * @example
 * ```ts
 * const c: RefusalCase = refusalCases().find((r) => r.code === 'SIGNATURE_MISMATCH')!;
 * ```
 */
export interface RefusalCase {
  code: WebhookErrorCode;
  status: number;
  request: ScenarioRequest;
  /** Text from the request that must appear in no log line: the body, and each signature (`v1`) sent. */
  secrets: string[];
}

/**
 * Every refusal a sender can cause over HTTP, one request each, for adapters configured with
 * `ADAPTER_SCENARIO_SECRET`: 405, 415, 413, each 401, each 400, and a body parsed before the adapter
 * (`parsedFirst`, RAW_BODY_UNAVAILABLE). Bodies carry a marker order number, so a test can show that no
 * part of a body reached the log.
 *
 * @example
 * ```ts
 * for (const c of refusalCases()) {
 *   const response = await send(c.request);
 *   expect(response.status).toBe(c.status);
 * }
 * ```
 */
export function refusalCases(): RefusalCase[] {
  const signed = (event: object | string, secret = ADAPTER_SCENARIO_SECRET, timestamp?: number) => {
    const body = typeof event === 'string' ? event : JSON.stringify(event);
    const { headers } = signWebhook(
      timestamp === undefined ? { event: body, secret } : { event: body, secret, timestamp },
    );
    const v1 = headers['x-service-signature']?.split('v1=')[1] ?? '';
    return { body, headers: { ...headers, 'x-service-event': 'payment.paid' }, secrets: [body, v1] };
  };
  const marked = () => samplePaymentPaidEvent({ orderNo: `order-log-marker-${Math.random().toString(36).slice(2)}` });
  const refusal = (
    code: WebhookErrorCode,
    status: number,
    { body, headers, secrets }: { body: string; headers: Record<string, string>; secrets: string[] },
    extra: Partial<ScenarioRequest> = {},
  ): RefusalCase => ({ code, status, request: { method: 'POST', headers, body, ...extra }, secrets });
  const without = (headers: Record<string, string>, name: string) =>
    Object.fromEntries(Object.entries(headers).filter(([k]) => k !== name));

  const ok = signed(marked());
  const wrongSecret = signed(marked(), 'whsec_some_other_endpoint_0123456789');
  const stale = signed(marked(), ADAPTER_SCENARIO_SECRET, Math.floor(Date.now() / 1000) - 3600);
  const notSpec = signed({ event: 'payment.paid', orderNo: `order-log-marker-${Math.random().toString(36).slice(2)}` });
  const big = signed(`{"pad":"${'x'.repeat(1024 * 1024)}"}`);
  const other = signed(marked());
  const missing = signed(marked());
  const malformed = signed(marked());
  const plain = signed(marked());
  const parsed = signed(marked());
  const noDelivery = signed(marked());
  return [
    { code: 'METHOD_NOT_ALLOWED', status: 405, request: { method: 'GET', headers: ok.headers }, secrets: ok.secrets },
    refusal('UNSUPPORTED_MEDIA_TYPE', 415, { ...plain, headers: { ...plain.headers, 'content-type': 'text/plain' } }),
    refusal('BODY_TOO_LARGE', 413, { ...big, secrets: [big.secrets[1] as string, 'x'.repeat(64)] }),
    refusal('MISSING_SIGNATURE', 401, { ...missing, headers: without(missing.headers, 'x-service-signature') }),
    refusal('MALFORMED_SIGNATURE', 401, {
      ...malformed,
      headers: { ...malformed.headers, 'x-service-signature': `t=${Math.floor(Date.now() / 1000)},v1=zz` },
    }),
    refusal('SIGNATURE_MISMATCH', 401, wrongSecret),
    refusal('TIMESTAMP_OUT_OF_TOLERANCE', 401, stale),
    refusal('INVALID_PAYLOAD', 400, notSpec),
    refusal('EVENT_MISMATCH', 400, { ...other, headers: { ...other.headers, 'x-service-event': 'payment.refunded' } }),
    refusal('MISSING_DELIVERY_ID', 400, { ...noDelivery, headers: without(noDelivery.headers, 'x-service-delivery') }),
    refusal('RAW_BODY_UNAVAILABLE', 500, parsed, { parsedFirst: true }),
  ];
}
