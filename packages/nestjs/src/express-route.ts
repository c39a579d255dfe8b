import type { IncomingMessage, ServerResponse } from 'node:http';
import type { WebhookRequestHandler } from '@service-pay/core';
import { toWebhookRequest } from '@service-pay/core/node';

/** The part of an Express app (4 or 5) the route needs. */
export interface ExpressAppLike {
  all(
    path: string,
    handler: (req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void) => void,
  ): unknown;
}

// Said in the RAW_BODY_UNAVAILABLE answer: on this platform only a parser mounted on the Express instance
// before NestFactory.create() can get to the body ahead of this route.
const FIX =
  'A body parser mounted on the Express instance before NestFactory.create() read this request first: mount it after NestFactory.create() (Nest mounts its own after this route), or keep the bytes in req.rawBody with a verify hook.';

/**
 * Serves the webhook on the Express instance itself. Called before Nest mounts its body parsers, so the
 * route reads the exact bytes whatever the app's body parsing; every status comes from the core.
 */
export function mountOnExpress(app: ExpressAppLike, path: string, handle: WebhookRequestHandler): void {
  app.all(path, (req, res, next) => {
    handle(toWebhookRequest(req, { fix: FIX }))
      .then(({ status, headers, body }) => {
        res.writeHead(status, headers).end(body);
      })
      // The core never rejects; this is an answer that could not be written (e.g. headers already sent).
      .catch(next);
  });
}
