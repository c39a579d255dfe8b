// Koa 3 + @koa/router. The trap: an app-wide @koa/bodyparser reads the stream first (500
// RAW_BODY_UNAVAILABLE); the fix: hand over the bytes it kept, `{ body: ctx.request.rawBody }`.
import { bodyParser } from '@koa/bodyparser';
import Router from '@koa/router';
import { createWebhookHandler } from '@service-pay/core';
import { toWebhookRequest } from '@service-pay/core/node';
import Koa from 'koa';
import { PORT, VARIANT, webhookOptions } from '../shared/webhook.js';

const handle = createWebhookHandler(webhookOptions());
const app = new Koa();
if (VARIANT !== 'plain') app.use(bodyParser());
const router = new Router();
router.post('/webhooks/service', async (ctx) => {
  const request =
    VARIANT === 'fix' ? toWebhookRequest(ctx.req, { body: ctx.request.rawBody }) : toWebhookRequest(ctx.req);
  const { status, headers, body } = await handle(request);
  ctx.status = status;
  ctx.set(headers);
  ctx.body = body;
});
app.use(router.routes());
app.listen(PORT, '127.0.0.1', () => console.log(`LISTENING ${PORT}`));
