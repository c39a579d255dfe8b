import { randomBytes } from 'node:crypto';

/**
 * One merchant of the simulated service: the API key pair that signs merchant API calls (spec 5.1), the
 * webhook secret that signs deliveries (spec 5.2), and the confirmation threshold before `PAID`.
 *
 * @example
 * ```ts
 * const merchant: MerchantConfig = {
 *   apiKey: 'ak_test_shop',
 *   apiSecret: 'sk_test_shop',
 *   webhookSecret: 'whsec_test_shop',
 *   confirmations: 3,
 * };
 * ```
 */
export interface MerchantConfig {
  apiKey: string;
  apiSecret: string;
  webhookSecret: string;
  /** Confirmations needed before a payment is PAID and its webhook is sent. Default 3. */
  confirmations?: number | undefined;
  /** A label for logs and the CLI. Default: the apiKey. */
  name?: string | undefined;
}

/**
 * Makes a merchant with fresh random keys (`ak_test_…`, `sk_test_…`, `whsec_test_…`).
 *
 * @example
 * ```ts
 * import { generateMerchant, startSimulator } from '@service-pay/simulator';
 *
 * const merchant = generateMerchant({ name: 'shop', confirmations: 1 });
 * const sim = await startSimulator({ merchants: [merchant] });
 * ```
 */
export function generateMerchant(
  overrides: { [K in keyof MerchantConfig]?: MerchantConfig[K] | undefined } = {},
): MerchantConfig & { confirmations: number } {
  return {
    apiKey: overrides.apiKey ?? `ak_test_${randomBytes(8).toString('hex')}`,
    apiSecret: overrides.apiSecret ?? `sk_test_${randomBytes(24).toString('hex')}`,
    webhookSecret: overrides.webhookSecret ?? `whsec_test_${randomBytes(24).toString('hex')}`,
    confirmations: overrides.confirmations ?? 3,
    ...(overrides.name === undefined ? {} : { name: overrides.name }),
  };
}
