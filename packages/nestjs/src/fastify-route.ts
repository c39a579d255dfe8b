import type { IncomingMessage } from 'node:http';
import type { WebhookRequestHandler } from '@service-pay/core';
import { type NodeBodySource, toWebhookRequest } from '@service-pay/core/node';

interface FastifyRequestLike {
  raw: IncomingMessage;
  body?: unknown;
}

interface FastifyReplyLike {
  code(status: number): FastifyReplyLike;
  headers(headers: Record<string, string>): FastifyReplyLike;
  send(payload?: unknown): unknown;
}

/** The part of a Fastify instance (a Nest `FastifyAdapter`'s) the route needs. */
export interface FastifyInstanceLike {
  register(plugin: (child: FastifyInstanceLike) => Promise<void>): unknown;
  removeAllContentTypeParsers(): unknown;
  addContentTypeParser(
    contentType: string,
    parser: (request: unknown, payload: IncomingMessage, done: (error: null, body: unknown) => void) => void,
  ): unknown;
  all(path: string, handler: (request: FastifyRequestLike, reply: FastifyReplyLike) => void): unknown;
}

const FIX =
  'A Fastify hook in front of this route (preParsing, preValidation or preHandler) consumed or replaced the body; let the webhook route receive it untouched.';

/**
 * Serves the webhook from a child context of the Fastify instance, whose only content-type parser hands
 * the body stream over unread: Nest's JSON parser keeps serving every other route, and the core reads the
 * exact bytes itself (stopping at `maxBodyBytes`) and decides every status.
 */
export function mountOnFastify(app: FastifyInstanceLike, path: string, handle: WebhookRequestHandler): void {
  app.register(async (child) => {
    child.removeAllContentTypeParsers();
    child.addContentTypeParser('*', (_request, payload, done) => done(null, payload));
    child.all(path, (request, reply) => {
      // Not returned: Fastify waits for reply.send, and the core never rejects.
      void handle(toWebhookRequest(request.raw, { fix: FIX, body: request.body as NodeBodySource })).then(
        ({ status, headers, body }) => {
          try {
            reply.code(status).headers(headers).send(body);
          } catch (error) {
            reply.send(error);
          }
        },
      );
    });
  });
}
