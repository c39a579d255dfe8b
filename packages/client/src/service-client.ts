import { checkPaymentInput } from './check-payment-input.js';
import { describe } from './describe-value.js';
import { ServiceApiError, ServiceInputError, ServiceNetworkError, ServiceTimeoutError } from './errors.js';
import type { CreatePaymentInput, Payment } from './payment.js';
import { signApiRequest } from './sign-api-request.js';

/**
 * Options of `createServiceClient`.
 *
 * @example
 * ```ts
 * const options: ServiceClientOptions = {
 *   baseUrl: 'https://pay.example',
 *   apiKey: process.env.SERVICE_API_KEY!,
 *   apiSecret: process.env.SERVICE_API_SECRET!,
 *   timeoutMs: 10_000,
 * };
 * ```
 */
export interface ServiceClientOptions {
  /** The service's base address, such as `https://pay.example` (a path prefix is kept and signed). */
  baseUrl: string;
  apiKey: string;
  apiSecret: string;
  /** A fetch implementation. Default: the global `fetch`, looked up at call time. */
  fetch?: typeof globalThis.fetch | undefined;
  /** Per-attempt limit for the whole answer, headers and body. Default 10 000 ms. */
  timeoutMs?: number | undefined;
  /**
   * How often a GET is retried after a network failure or timeout. Default 2. A POST is never retried:
   * the API has no idempotency key, so a retry could create a second payment.
   */
  maxNetworkRetries?: number | undefined;
}

/**
 * The merchant API, spec section 4.
 *
 * @example
 * ```ts
 * const client: ServiceClient = createServiceClient({ baseUrl, apiKey, apiSecret });
 * const payment = await client.getPayment('p_123');
 * ```
 */
export interface ServiceClient {
  /** `POST /v1/payments`. The input is checked first (see `checkPaymentInput`); never retried. */
  createPayment(input: CreatePaymentInput): Promise<Payment>;
  /** `GET /v1/payments/:paymentId`. Retried on network failure and timeout. */
  getPayment(paymentId: string): Promise<Payment>;
}

const DEFAULT_TIMEOUT_MS = 10_000;
const DEFAULT_NETWORK_RETRIES = 2;
/** First pause before a GET retry; doubles each time. Short: a refused connection rarely heals slowly. */
const RETRY_DELAY_MS = 100;
const PAYMENT_ID = /^p_[A-Za-z0-9_-]{1,125}$/;

interface Resolved {
  origin: string;
  prefix: string;
  apiKey: string;
  apiSecret: string;
  fetch: typeof globalThis.fetch | undefined;
  timeoutMs: number;
  maxNetworkRetries: number;
}

/**
 * Creates a client for the merchant API. Every request is signed per spec 5.1 over the exact bytes sent.
 * Errors are typed: `ServiceInputError` (refused before sending), `ServiceApiError` (the service said
 * no; `status`, `code`, `message` from its error body), `ServiceTimeoutError` and `ServiceNetworkError`.
 *
 * @example
 * ```ts
 * import { createServiceClient } from '@service-pay/client';
 *
 * const client = createServiceClient({ baseUrl: 'http://127.0.0.1:4010', apiKey, apiSecret });
 * const payment = await client.createPayment({
 *   orderNo: 'order-42',
 *   tokenSymbol: 'USDT',
 *   amount: '12.50',
 *   expireSec: 900,
 *   notifyUrl: 'https://shop.example/webhooks/service',
 * });
 * console.log(payment.paymentId, payment.status);
 * ```
 */
export function createServiceClient(options: ServiceClientOptions): ServiceClient {
  const o = resolveOptions(options);
  return {
    async createPayment(input) {
      const problems = checkPaymentInput(input);
      const first = problems[0];
      if (first !== undefined) {
        const rest =
          problems.length > 1
            ? ` (and ${problems.length - 1} more: ${problems
                .slice(1)
                .map((p) => p.code)
                .join(', ')})`
            : '';
        throw new ServiceInputError(first.code, `${first.message}${rest}`, first.field, problems);
      }
      return call(o, 'POST', '/v1/payments', JSON.stringify(input));
    },
    async getPayment(paymentId) {
      if (typeof paymentId !== 'string' || !PAYMENT_ID.test(paymentId)) {
        throw new ServiceInputError(
          'INVALID_PAYMENT_ID',
          `paymentId must be a payment identifier starting with "p_", got ${describe(paymentId)}.`,
          'paymentId',
        );
      }
      return call(o, 'GET', `/v1/payments/${paymentId}`, undefined);
    },
  };
}

function resolveOptions(options: ServiceClientOptions): Resolved {
  const bad = (field: string, message: string) => new ServiceInputError('INVALID_OPTIONS', message, field);
  if (options === null || typeof options !== 'object') {
    throw bad('options', 'createServiceClient needs { baseUrl, apiKey, apiSecret }.');
  }
  let base: URL;
  try {
    base = new URL(options.baseUrl);
  } catch {
    throw bad('baseUrl', `baseUrl must be an absolute http:// or https:// URL, got ${describe(options.baseUrl)}.`);
  }
  if (base.protocol !== 'http:' && base.protocol !== 'https:') {
    throw bad('baseUrl', `baseUrl must be an http:// or https:// URL, got the scheme "${base.protocol}".`);
  }
  if (base.search !== '' || base.hash !== '')
    throw bad('baseUrl', 'baseUrl must not carry a query string or fragment.');
  if (typeof options.apiKey !== 'string' || options.apiKey.length === 0)
    throw bad('apiKey', 'apiKey must be a non-empty string.');
  if (typeof options.apiSecret !== 'string' || options.apiSecret.length === 0) {
    throw bad('apiSecret', 'apiSecret must be a non-empty string.');
  }
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (!Number.isSafeInteger(timeoutMs) || timeoutMs <= 0) {
    throw bad('timeoutMs', `timeoutMs must be a whole number of milliseconds > 0, got ${describe(timeoutMs)}.`);
  }
  const maxNetworkRetries = options.maxNetworkRetries ?? DEFAULT_NETWORK_RETRIES;
  if (!Number.isSafeInteger(maxNetworkRetries) || maxNetworkRetries < 0 || maxNetworkRetries > 10) {
    throw bad(
      'maxNetworkRetries',
      `maxNetworkRetries must be a whole number from 0 to 10, got ${describe(maxNetworkRetries)}.`,
    );
  }
  const custom = options.fetch;
  if (custom !== undefined && typeof custom !== 'function') throw bad('fetch', 'fetch must be a fetch function.');
  // Signing validates the key's characters; doing it once here reports a bad key at construction.
  signApiRequest({ method: 'GET', path: '/', apiKey: options.apiKey, apiSecret: options.apiSecret, timestamp: 0 });
  return {
    origin: base.origin,
    prefix: base.pathname.replace(/\/+$/, ''),
    apiKey: options.apiKey,
    apiSecret: options.apiSecret,
    fetch: custom,
    timeoutMs,
    maxNetworkRetries,
  };
}

async function call(o: Resolved, method: 'GET' | 'POST', path: string, body: string | undefined): Promise<Payment> {
  const attempts = method === 'GET' ? 1 + o.maxNetworkRetries : 1;
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await once(o, method, path, body);
    } catch (error) {
      const transient = error instanceof ServiceNetworkError || error instanceof ServiceTimeoutError;
      if (!transient || attempt >= attempts) throw error;
      await new Promise((resolve) => setTimeout(resolve, RETRY_DELAY_MS * 2 ** (attempt - 1)));
    }
  }
}

async function once(o: Resolved, method: 'GET' | 'POST', path: string, body: string | undefined): Promise<Payment> {
  const fullPath = `${o.prefix}${path}`;
  const what = `${method} ${fullPath}`;
  // Looked up per call, so a fetch installed or instrumented after construction is used.
  const fetchImpl = o.fetch ?? globalThis.fetch;
  if (typeof fetchImpl !== 'function') {
    throw new ServiceInputError(
      'INVALID_OPTIONS',
      'No fetch available: pass options.fetch on runtimes without a global fetch.',
      'fetch',
    );
  }
  const controller = new AbortController();
  // One timer for the whole answer: a server that sends headers and then stalls the body is a timeout too.
  const timer = setTimeout(() => controller.abort(), o.timeoutMs);
  try {
    const headers: Record<string, string> = {
      accept: 'application/json',
      'content-type': 'application/json',
      authorization: signApiRequest({ method, path: fullPath, body, apiKey: o.apiKey, apiSecret: o.apiSecret }),
    };
    let response: Response;
    let text: string;
    try {
      response = await fetchImpl(`${o.origin}${fullPath}`, {
        method,
        headers,
        body: body ?? null,
        signal: controller.signal,
      });
      text = await response.text();
    } catch (error) {
      if (controller.signal.aborted) throw new ServiceTimeoutError(o.timeoutMs, what);
      throw new ServiceNetworkError(what, error);
    }
    if (!response.ok) throw apiError(response.status, text, what);
    return toPayment(response.status, text, what);
  } finally {
    clearTimeout(timer);
  }
}

function apiError(status: number, text: string, what: string): ServiceApiError {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    // Not the spec's error body: a proxy or load balancer answered. Keep a little of it for the log.
  }
  const body = parsed as { error?: unknown; message?: unknown } | undefined;
  if (body !== null && typeof body === 'object' && typeof body.error === 'string' && body.error.length > 0) {
    const message =
      typeof body.message === 'string' && body.message.length > 0 ? body.message : `${what} failed with ${body.error}.`;
    return new ServiceApiError(status, body.error, message);
  }
  const excerpt = text.length > 200 ? `${text.slice(0, 200)}...` : text;
  return new ServiceApiError(
    status,
    'HTTP_ERROR',
    `${what} answered ${status} without an error body${excerpt ? `: ${excerpt}` : '.'}`,
  );
}

function toPayment(status: number, text: string, what: string): Payment {
  let p: Partial<Payment> | null = null;
  try {
    p = JSON.parse(text);
  } catch {
    // Reported below with the same code as any other body that is not a payment.
  }
  if (p === null || typeof p !== 'object' || typeof p.paymentId !== 'string' || typeof p.status !== 'string') {
    throw new ServiceApiError(
      status,
      'INVALID_RESPONSE',
      `${what} answered ${status}, but the body is not a payment (JSON with paymentId and status).`,
    );
  }
  return p as Payment;
}
