import { bootShop } from '@service-pay/example-shop-kit';
import { describeShop } from '@service-pay/example-shop-kit/testing';
import { buildApp } from '../src/app.js';

describeShop('fastify-orders', async (config) => {
  let url = '';
  const booted = await bootShop(config, { notifyUrl: () => `${url}/webhooks/service` });
  const app = await buildApp(booted);
  url = await app.listen({ port: 0, host: '127.0.0.1' });
  return {
    url,
    close: async () => {
      await app.close();
      await booted.close();
    },
  };
});
