import type { AddressInfo } from 'node:net';
import { type BootedShop, bootShop, type ShopConfig } from '@service-pay/example-shop-kit';
import { createApp } from '../src/app.js';

/** The Express shop on a free port, as `pnpm start` runs it, with its booted internals for the test to read. */
export async function startExpressShop(config: ShopConfig): Promise<{
  url: string;
  booted: BootedShop;
  close: () => Promise<void>;
}> {
  let url = '';
  const booted = await bootShop(config, {
    notifyUrl: () => `${url}/webhooks/service`,
    logger: { warn: () => {}, error: () => {} },
  });
  const server = createApp(booted).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    booted,
    close: async () => {
      await new Promise((resolve) => server.close(resolve));
      await booted.close();
    },
  };
}
