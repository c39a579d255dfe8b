import type { AddressInfo } from 'node:net';
import { bootShop } from '@service-pay/example-shop-kit';
import { describeShop } from '@service-pay/example-shop-kit/testing';
import { createApp } from '../src/app.js';

describeShop('express-orders', async (config) => {
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
    close: async () => {
      await new Promise((resolve) => server.close(resolve));
      await booted.close();
    },
  };
});
