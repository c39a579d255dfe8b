// h3 1.15 (Nitro and Nuxt server routes run on it). The trap: `readBody(event)` somewhere before (a
// middleware) consumes the stream (500 RAW_BODY_UNAVAILABLE); the fix: h3 keeps the bytes,
// `{ body: await readRawBody(event, false) }`.
import { createServer } from 'node:http';
import { createFetchHandler, createWebhookHandler } from '@service-pay/core';
import { toWebhookRequest } from '@service-pay/core/node';
import { createApp, createRouter, defineEventHandler, readBody, readRawBody, toNodeListener, toWebRequest } from 'h3';
import { PORT, VARIANT, webhookOptions } from '../shared/webhook.js';

const handle = createWebhookHandler(webhookOptions());
const handleFetch = createFetchHandler(webhookOptions());
const app = createApp();
if (VARIANT !== 'plain') {
  app.use(defineEventHandler(async (event) => void (event.method === 'POST' ? await readBody(event) : undefined)));
}
const router = createRouter();
router.post(
  '/webhooks/service',
  defineEventHandler(async (event) => {
    if (VARIANT === 'plain') return handleFetch(toWebRequest(event));
    const request =
      VARIANT === 'fix'
        ? toWebhookRequest(event.node.req, { body: (await readRawBody(event, false)) as Buffer })
        : toWebhookRequest(event.node.req);
    const { status, headers, body } = await handle(request);
    return new Response(body, { status, headers });
  }),
);
app.use(router);
createServer(toNodeListener(app)).listen(PORT, '127.0.0.1', () => console.log(`LISTENING ${PORT}`));
