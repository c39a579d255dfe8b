// Elysia 1.4 on Node (@elysiajs/node). The trap: also destructuring `body` makes Elysia parse the request
// first (500 RAW_BODY_UNAVAILABLE); the fix: take only `{ request }`.
import { node } from '@elysiajs/node';
import { createFetchHandler } from '@service-pay/core';
import { Elysia } from 'elysia';
import { PORT, VARIANT, webhookOptions } from '../shared/webhook.js';

const handle = createFetchHandler(webhookOptions());
const app = new Elysia({ adapter: node() });
if (VARIANT === 'trap') {
  app.post('/webhooks/service', ({ request, body }) => {
    void body; // only mentioning it makes Elysia parse the request
    return handle(request);
  });
} else app.post('/webhooks/service', ({ request }) => handle(request));
app.listen({ port: PORT, hostname: '127.0.0.1' }, () => console.log(`LISTENING ${PORT}`));
