import { createFetchHandler, type HandlerOptions } from '@service-pay/core';

/**
 * The one handler every recipe mounts: the secret from the environment, the memory store (one process
 * per recipe app), and a credit that prints `CREDITED <paymentId>` so the test counts credits across
 * the process boundary. A real shop writes the credit to its database through a shared store.
 */
export function webhookOptions(): HandlerOptions {
  const secret = process.env.SERVICE_WEBHOOK_SECRET;
  if (!secret) throw new Error('SERVICE_WEBHOOK_SECRET is not set');
  return {
    secret,
    logger: { warn: () => {}, error: (fields, message) => console.error(message, fields.code ?? '') },
    onPaymentPaid: async (event) => {
      console.log(`CREDITED ${event.paymentId}`);
    },
  };
}

/** Which variant of the app to start: `plain`, or the framework's raw-body `trap`, or its `fix`. */
export const VARIANT = process.env.RECIPE_VARIANT ?? 'plain';
export const PORT = Number(process.env.PORT ?? 3000);

/**
 * A fetch handler made on its first request: SvelteKit, React Router and Astro import route modules at build
 * time to read their exports, when the secret is not there (and a handler checks its secret when made).
 */
export function lazyFetchHandler(): (request: Request) => Promise<Response> {
  let handle: ((request: Request) => Promise<Response>) | undefined;
  return (request) => {
    handle ??= createFetchHandler(webhookOptions());
    return handle(request);
  };
}
