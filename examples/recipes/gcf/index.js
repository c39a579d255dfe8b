// Google Cloud Functions (@google-cloud/functions-framework, an HTTP function). The framework parses JSON
// bodies before the function runs and keeps the bytes as `req.rawBody`, which toWebhookRequest(req) uses.
// The trap: handing over the parsed `req.body` (500 RAW_BODY_UNAVAILABLE); the fix: hand over `req` alone.
import functions from '@google-cloud/functions-framework';
import { createWebhookHandler } from '@service-pay/core';
import { toWebhookRequest } from '@service-pay/core/node';

const secret = process.env.SERVICE_WEBHOOK_SECRET;
const handle = createWebhookHandler({
  secret,
  logger: { warn: () => {}, error: (fields, message) => console.error(message, fields.code ?? '') },
  onPaymentPaid: async (event) => console.log(`CREDITED ${event.paymentId}`),
});
const trap = process.env.RECIPE_VARIANT === 'trap';

functions.http('webhook', async (req, res) => {
  const { status, headers, body } = await handle(
    trap ? toWebhookRequest(req, { body: req.body }) : toWebhookRequest(req),
  );
  res.status(status).set(headers).send(body);
});
