import { AsyncLocalStorage } from 'node:async_hooks';
import {
  createWebhookHandler,
  type DedupeStore,
  type HandlerOptions,
  type WebhookLogger,
  type WebhookStore,
} from '@service-pay/core';
import {
  bodyTimeout,
  bodyTooLarge,
  clientDisconnected,
  type NodeBodySource,
  toWebhookRequest,
} from '@service-pay/core/node';
import type { FastifyBaseLogger, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';

/**
 * Options of the plugin: where to mount the route, plus the core's handler options.
 *
 * @example
 * ```ts
 * const options: ServiceWebhookOptions = { path: '/webhooks/service', secret: process.env.SERVICE_WEBHOOK_SECRET!, onPaymentPaid };
 * ```
 */
export interface ServiceWebhookOptions<S extends WebhookStore = DedupeStore> extends HandlerOptions<S> {
  /** The route's URL, e.g. `/webhooks/service`. */
  path: string;
}

const FIX =
  'A hook or plugin in front of this route (preParsing, preValidation or preHandler) consumed or replaced the body; let the webhook route receive it untouched.';

const plugin: FastifyPluginAsync<ServiceWebhookOptions<WebhookStore>> = async (app, options) => {
  // Fastify's own register options (`app.register(plugin, { prefix, logLevel })`) are Fastify's, not the
  // handler's: taken out, so the core's check of unknown option keys sees only what is meant for it.
  const {
    path,
    prefix: _prefix,
    logLevel: _logLevel,
    logSerializers: _logSerializers,
    ...handlerOptions
  } = options as ServiceWebhookOptions<WebhookStore> & {
    prefix?: unknown;
    logLevel?: unknown;
    logSerializers?: unknown;
  };
  // The core takes one logger per handler; this one finds the current request's `request.log`. With Fastify's
  // logger off (its null logger is its own child) there is nothing to route to: the core's console default
  // keeps alerts visible, and no AsyncLocalStorage is paid for on every request.
  const currentLog = new AsyncLocalStorage<FastifyBaseLogger>();
  const routeLogs = handlerOptions.logger === undefined && app.log.child({}) !== app.log;
  const handle = createWebhookHandler(
    routeLogs ? { ...handlerOptions, logger: requestLogger(currentLog, app.log) } : handlerOptions,
  );

  // fastify-plugin shares this plugin's context with the parent, so the raw-body parser lives one level
  // down: every other route of the app keeps Fastify's JSON parsing.
  await app.register(async (child) => {
    // The core's limit (its default or the option), as the route's bodyLimit: Fastify stops reading there.
    const bodyLimit = handle.maxBodyBytes;
    child.removeAllContentTypeParsers();
    // Fastify's own Buffer reader, stopped at bodyLimit: the cheapest way to the exact bytes. Every content
    // type is taken as bytes, so the core (not Fastify) answers a wrong one with 415.
    const keepBytes = (_request: FastifyRequest, body: Buffer, done: (error: null, body: Buffer) => void) =>
      done(null, body);
    child.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit }, keepBytes);
    // The service's own content type by name too: Fastify caches the parser of an exact match, while the
    // catch-all makes it parse the Content-Type header on every request.
    child.addContentTypeParser('application/json', { parseAs: 'buffer', bodyLimit }, keepBytes);
    // Not async, and it returns nothing: Fastify then waits for the reply, which is sent straight from the
    // core's answer. An await here plus Fastify's handling of a returned promise would add two microtask
    // turns per delivery, and under load each turn costs throughput (see handleOnce in the core).
    const pendingBodies = new WeakMap<object, ReturnType<typeof setTimeout>>();
    const answer = (request: FastifyRequest, reply: FastifyReply, refusal?: unknown): void => {
      clearTimeout(pendingBodies.get(request.raw));
      const webhookRequest = toWebhookRequest(request.raw, { fix: FIX, body: request.body as NodeBodySource });
      // Fastify refused the body before the route ran (over bodyLimit): the core still words the answer.
      if (refusal !== undefined) webhookRequest.rawBody = () => Promise.reject(refusal);
      // The core never rejects. The try keeps a fault in sending from becoming an unhandled rejection.
      handle(webhookRequest).then(({ status, headers, body }) => {
        // The client is gone (it reset the connection mid-body, or gave up waiting): nobody to answer, so
        // the reply is taken off Fastify's hands instead of being written to a closed socket.
        if (reply.raw.destroyed) {
          reply.hijack();
          return;
        }
        try {
          reply.code(status).headers(headers).send(body);
        } catch (error) {
          reply.send(error);
        }
      });
    };
    // With request logs, every answer runs with its request's `request.log` at hand (see requestLogger).
    const route = routeLogs
      ? (request: FastifyRequest, reply: FastifyReply, refusal?: unknown) =>
          currentLog.run(request.log, () => answer(request, reply, refusal))
      : answer;
    child.setErrorHandler((error, request, reply) => {
      if ((error as { code?: string }).code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
        route(request, reply, bodyTooLarge(bodyLimit));
      } else if (reply.raw.destroyed) {
        // Fastify's body reader failed because the client reset the connection mid-body: the core logs it
        // at debug (not as Fastify's 400), and nothing is written back.
        route(request, reply, clientDisconnected(error));
      } else {
        throw error;
      }
    });
    // Fastify reads the body itself (and its requestTimeout is off by default): a body still arriving
    // bodyTimeoutMs after the request began is answered 408 here, with the connection closed. A body that
    // came with its headers (nearly every delivery) costs no timer.
    const bodyTimeoutMs = handle.bodyTimeoutMs;
    child.addHook('onRequest', (request, reply, done) => {
      if (!request.raw.complete) {
        const timer = setTimeout(() => {
          if (!reply.sent && !reply.raw.destroyed) route(request, reply, bodyTimeout(bodyTimeoutMs));
        }, bodyTimeoutMs);
        pendingBodies.set(request.raw, timer); // cleared by the route's answer, whichever way it comes
      }
      done();
    });
    child.all(path, { bodyLimit }, route);
  });
};

function requestLogger(current: AsyncLocalStorage<FastifyBaseLogger>, fallback: FastifyBaseLogger): WebhookLogger {
  const log = () => current.getStore() ?? fallback;
  return {
    debug: (fields, message) => log().debug(fields, message),
    info: (fields, message) => log().info(fields, message),
    warn: (fields, message) => log().warn(fields, message),
    error: (fields, message) => log().error(fields, message),
  };
}

/**
 * Fastify 5 plugin that registers a POST webhook route at `options.path`, verifies each delivery and runs
 * `onPaymentPaid` exactly once per payment. The route reads its own raw body (other routes keep parsing
 * JSON), stops at `maxBodyBytes`, and logs through `request.log`; every status comes from the core.
 *
 * @example
 * ```ts
 * import Fastify from 'fastify';
 * import { serviceWebhook } from '@service-pay/fastify';
 *
 * const app = Fastify({ logger: true });
 * await app.register(serviceWebhook, {
 *   path: '/webhooks/service',
 *   secret: process.env.SERVICE_WEBHOOK_SECRET!,
 *   onPaymentPaid: async (event) => orders.credit(event.orderNo, event.paymentId),
 * });
 * ```
 */
export const serviceWebhook = fp(plugin, { name: '@service-pay/fastify', fastify: '5.x' });
