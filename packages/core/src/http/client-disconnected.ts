import { WebhookError } from '../errors/webhook-error.js';

/**
 * The one CLIENT_DISCONNECTED refusal: the client went away (reset or closed the connection) before its
 * body was complete. The core logs it at debug (rate-limited: the first, then a count every 10 s) and
 * reports each to `onOutcome`; nobody is left to answer, so an adapter writes nothing. Adapters whose framework reads the body itself (Fastify) hand it to the
 * core as their body reader's rejection, as they do with `bodyTooLarge`.
 *
 * @example
 * ```ts
 * const request = { ...webhookRequest, rawBody: () => Promise.reject(clientDisconnected(frameworkError)) };
 * ```
 */
export function clientDisconnected(cause?: unknown): WebhookError {
  return new WebhookError(
    'CLIENT_DISCONNECTED',
    'The client went away before the body was complete.',
    cause === undefined ? undefined : { cause },
  );
}
