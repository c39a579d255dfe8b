import { describe, expect, it } from 'vitest';
import { readConfig, simulatorShopConfig } from '../src/index.js';

describe('shop configuration', () => {
  it('names every missing variable at once and says where to get them', () => {
    expect(() => readConfig({ SERVICE_API_URL: 'http://127.0.0.1:4010' })).toThrow(
      /SERVICE_API_KEY, SERVICE_API_SECRET, SERVICE_WEBHOOK_SECRET\. Start the simulator \(pnpm service-pay simulate/,
    );
  });

  it('reads the optional settings and refuses a bad chaos rate', () => {
    const env = { SERVICE_API_URL: 'u', SERVICE_API_KEY: 'k', SERVICE_API_SECRET: 's', SERVICE_WEBHOOK_SECRET: 'w' };
    expect(readConfig({ ...env, PORT: '8080', REDIS_URL: 'redis://x' })).toMatchObject({
      port: 8080,
      redisUrl: 'redis://x',
      databaseUrl: undefined,
    });
    expect(() => readConfig({ ...env, SHOP_CHAOS_FAILURE_RATE: '1.5' })).toThrow(/SHOP_CHAOS_FAILURE_RATE/);
    expect(readConfig(env).reconcileEveryMs).toBe(60_000);
    expect(readConfig({ ...env, SHOP_RECONCILE_EVERY_MS: '0' }).reconcileEveryMs).toBe(0);
    expect(() => readConfig({ ...env, SHOP_RECONCILE_EVERY_MS: 'soon' })).toThrow(/SHOP_RECONCILE_EVERY_MS/);
    expect(
      simulatorShopConfig('http://sim', { apiKey: 'k', apiSecret: 's', webhookSecret: 'w' }, { port: 1 }),
    ).toMatchObject({ port: 1, serviceUrl: 'http://sim', webhookSecret: 'w' });
  });
});
