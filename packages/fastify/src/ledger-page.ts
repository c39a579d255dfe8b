import type { LedgerPageOptions } from '@service-pay/core';
import { ledgerPageListener } from '@service-pay/core/node';
import type { FastifyPluginAsync } from 'fastify';

/**
 * The operator's page of failing payments (`createLedgerPage`) as a Fastify plugin at `path`, behind your
 * own `authorize`. Its form bodies are read as bytes in a context of its own: other routes keep their parsers.
 *
 * @example
 * ```ts
 * await app.register(ledgerPage, { path: '/ops/payments', store, reconciler, authorize: (req) => isAdmin(req) });
 * ```
 */
export const ledgerPage: FastifyPluginAsync<LedgerPageOptions & { path: string }> = async (app, options) => {
  const { path, ...pageOptions } = options;
  const listener = ledgerPageListener(pageOptions);
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string', bodyLimit: 4_096 }, (_request, body, done) => done(null, body));
  app.route({
    method: ['GET', 'HEAD', 'POST'],
    url: path,
    handler: (request, reply) => {
      reply.hijack();
      listener(Object.assign(request.raw, { body: request.body, originalUrl: request.url }), reply.raw);
    },
  });
};
