import type { AddressInfo } from 'node:net';
import { bootShop, simulatorShopConfig } from '@service-pay/example-shop-kit';
import { generateMerchant, startSimulator } from '@service-pay/simulator';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createApp } from '../src/app.js';

// The shop's operator page behind its example check, a bearer token: only the exact header opens it.
const merchant = generateMerchant({ name: 'operator-page' });
const sim = await startSimulator({ merchants: [merchant], seed: 7 });
let close: () => Promise<void> = async () => {};
const pages: Record<'withToken' | 'withoutToken', string> = { withToken: '', withoutToken: '' };

beforeAll(async () => {
  const booted = await bootShop(simulatorShopConfig(sim.url, merchant, { tablePrefix: '' }), {
    notifyUrl: () => 'http://127.0.0.1:9/unused',
    logger: { warn: () => {}, error: () => {} },
  });
  const servers = [createApp(booted, { opsToken: 's3cret-token' }), createApp(booted, {})].map((app) =>
    app.listen(0, '127.0.0.1'),
  );
  await Promise.all(servers.map((s) => new Promise((resolve) => s.once('listening', resolve))));
  const [a, b] = servers.map((s) => `http://127.0.0.1:${(s.address() as AddressInfo).port}/ops/payments`);
  pages.withToken = a as string;
  pages.withoutToken = b as string;
  close = async () => {
    await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
    await booted.close();
  };
});
afterAll(async () => {
  await close();
  await sim.stop();
});

it('opens the page to the exact bearer token only', async () => {
  const status = async (url: string, authorization?: string) =>
    (await fetch(url, authorization === undefined ? {} : { headers: { authorization } })).status;
  expect(await status(pages.withToken, 'Bearer s3cret-token')).toBe(200);
  for (const wrong of [undefined, '', 'Bearer ', 'Bearer s3cret-toke', 'bearer s3cret-token', 's3cret-token'])
    expect(await status(pages.withToken, wrong)).toBe(403);
  // No token configured: nobody gets in, whatever is sent.
  for (const any of [undefined, 'Bearer ', 'Bearer undefined']) expect(await status(pages.withoutToken, any)).toBe(403);
});
