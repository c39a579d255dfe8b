import { createServiceClient, signApiRequest } from '@service-pay/client';
import { generateMerchant, type MerchantConfig, type SimulatorOptions, startSimulator } from '../../src/index.js';

export const input = (overrides: object = {}) => ({
  orderNo: `order-${Math.random().toString(36).slice(2)}`,
  tokenSymbol: 'USDT',
  amount: '12.50',
  expireSec: 900,
  notifyUrl: 'http://127.0.0.1:9/unused',
  ...overrides,
});

/**
 * A simulator with one merchant, a client for it and fast retries; stopped by the caller. The client does
 * not retry (these tests look at what the simulator answers); `retryingClient` retries as the client does
 * by default, with short waits.
 */
export async function setup(options: Partial<SimulatorOptions> & { merchant?: Partial<MerchantConfig> } = {}) {
  const { merchant: merchantOverrides, ...rest } = options;
  const merchant = generateMerchant({ confirmations: 2, ...merchantOverrides });
  const sim = await startSimulator({ merchants: [merchant], retry: { baseDelayMs: 10, timeoutMs: 1000 }, ...rest });
  const keys = { baseUrl: sim.url, apiKey: merchant.apiKey, apiSecret: merchant.apiSecret };
  const client = createServiceClient({ ...keys, retry: false });
  const retryingClient = createServiceClient({
    ...keys,
    retry: { maxAttempts: 6, baseDelayMs: 20, maxDelayMs: 200, deadlineMs: 10_000 },
  });
  return { sim, merchant, client, retryingClient };
}

/** A raw, correctly signed request, for what the client would refuse to send. */
export function signedFetch(
  url: string,
  merchant: { apiKey: string; apiSecret: string },
  method: string,
  path: string,
  body?: string,
  headers: Record<string, string> = { 'content-type': 'application/json' },
) {
  const authorization = signApiRequest({ method, path, body, apiKey: merchant.apiKey, apiSecret: merchant.apiSecret });
  return fetch(`${url}${path}`, { method, headers: { ...headers, authorization }, body: body ?? null });
}
