import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The API Gateway HTTP API event (payload format 2.0) `serveLambdaLocally` invokes the function with: every
 * field `APIGatewayProxyEventV2` of `@types/aws-lambda` requires, so a handler typed with it takes this.
 *
 * @example
 * ```ts
 * const handler = async (event: LocalHttpApiEvent) => ({ statusCode: 200, body: event.rawPath });
 * ```
 */
export interface LocalHttpApiEvent {
  version: '2.0';
  routeKey: string;
  rawPath: string;
  rawQueryString: string;
  cookies?: string[];
  headers: Record<string, string | undefined>;
  queryStringParameters?: Record<string, string | undefined>;
  requestContext: {
    accountId: string;
    apiId: string;
    domainName: string;
    domainPrefix: string;
    http: { method: string; path: string; protocol: string; sourceIp: string; userAgent: string };
    requestId: string;
    routeKey: string;
    stage: string;
    time: string;
    timeEpoch: number;
  };
  body?: string;
  isBase64Encoded: boolean;
}

/**
 * The Lambda `context` a locally served function gets: the fields of `Context` in `@types/aws-lambda`, with
 * the function name given and a clock for `getRemainingTimeInMillis`.
 *
 * @example
 * ```ts
 * const handler = async (_event: LocalHttpApiEvent, context: LocalLambdaContext) => ({ statusCode: 200, body: context.awsRequestId });
 * ```
 */
export interface LocalLambdaContext {
  callbackWaitsForEmptyEventLoop: boolean;
  functionName: string;
  functionVersion: string;
  invokedFunctionArn: string;
  memoryLimitInMB: string;
  awsRequestId: string;
  logGroupName: string;
  logStreamName: string;
  getRemainingTimeInMillis(): number;
  done(error?: Error, result?: unknown): void;
  fail(error: Error | string): void;
  succeed(messageOrObject: unknown): void;
}

/**
 * A function as Lambda runs it: async (returns the result) or with a callback. A handler typed
 * `APIGatewayProxyHandlerV2` from `@types/aws-lambda`, or the one `createLambdaHandler` returns, fits.
 *
 * @example
 * ```ts
 * const fn: LocalLambdaFunction = async () => ({ statusCode: 204 });
 * ```
 */
export type LocalLambdaFunction = (
  event: LocalHttpApiEvent,
  context: LocalLambdaContext,
  callback: (error?: Error | string | null, result?: unknown) => void,
) => unknown;

/**
 * Options of `serveLambdaLocally`.
 *
 * @example
 * ```ts
 * const options: ServeLambdaLocallyOptions = { port: 3000, timeoutMs: 10_000 };
 * ```
 */
export interface ServeLambdaLocallyOptions {
  /** The port to listen on; default 3000, 0 picks a free one. */
  port?: number;
  /** Default 127.0.0.1: only this machine reaches it. */
  host?: string;
  /** The function's timeout: past it the caller gets API Gateway's 503. Default 30,000 (API Gateway's own limit). */
  timeoutMs?: number;
  /** The function name its `context` carries. Default `local`. */
  functionName?: string;
}

/**
 * A running local endpoint: the function's URL and how to stop it.
 *
 * @example
 * ```ts
 * const server: LocalLambdaServer = await serveLambdaLocally(handler);
 * await server.close();
 * ```
 */
export interface LocalLambdaServer {
  /** `http://127.0.0.1:<port>`: what `service-pay listen --forward-to` takes, with the route's path. */
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

/** API Gateway's payload limit: a larger request never reaches the function. */
const MAX_BODY_BYTES = 10 * 1024 * 1024;

/** Content types API Gateway passes to the function as text; any other body is base64. */
const TEXT = /^(?:text\/|application\/(?:[\w.+-]+\+)?(?:json|xml|javascript|x-www-form-urlencoded)\b)/i;

/**
 * Serves a Lambda function over HTTP on this machine as an API Gateway HTTP API would (payload format 2.0,
 * `$default` route), for development: `service-pay listen --forward-to http://127.0.0.1:3000/webhooks/service`
 * and `service-pay trigger` then reach the function as the payment service reaches it behind API Gateway.
 * Each request becomes one invocation in this process: headers lowercased and repeated ones joined with
 * commas, the body passed as API Gateway passes it (text for JSON and other text types when it is valid
 * UTF-8, base64 otherwise), so a webhook's signature is checked on the exact bytes sent. The result's
 * `statusCode`, `headers`, `cookies` and (base64) `body` become the answer; a result without `statusCode`
 * is sent as JSON with 200, as API Gateway does. A function that throws gets API Gateway's 500
 * `{"message":"Internal Server Error"}` (the error is logged here), one past `timeoutMs` its 503.
 *
 * Not for production: there, API Gateway does this. No authorizers, stages or custom domains.
 *
 * @example
 * ```ts
 * import { createLambdaHandler, serveLambdaLocally } from '@service-pay/lambda';
 *
 * const handler = createLambdaHandler({ secret: process.env.SERVICE_WEBHOOK_SECRET!, onPaymentPaid: async () => {} });
 * const server = await serveLambdaLocally(handler, { port: 3000 });
 * console.log(`forward webhooks to ${server.url}/webhooks/service`);
 * ```
 */
export async function serveLambdaLocally(
  fn: LocalLambdaFunction,
  options: ServeLambdaLocallyOptions = {},
): Promise<LocalLambdaServer> {
  const host = options.host ?? '127.0.0.1';
  const timeoutMs = options.timeoutMs ?? 30_000;
  const functionName = options.functionName ?? 'local';
  const server: Server = createServer((req, res) => {
    serve(req, res).catch((error: unknown) => {
      console.error('[serveLambdaLocally] could not answer:', error);
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end('{"message":"Internal Server Error"}');
    });
  });

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readBody(req);
    if (body === null) {
      res.writeHead(413, { 'content-type': 'application/json' }).end('{"message":"Request Entity Too Large"}');
      return;
    }
    const event = toEvent(req, body, host);
    const result = await invoke(fn, event, timeoutMs, functionName);
    if (result === TIMED_OUT) {
      res.writeHead(503, { 'content-type': 'application/json' }).end('{"message":"Service Unavailable"}');
      return;
    }
    if (result instanceof Failure) {
      console.error(
        `[serveLambdaLocally] the function failed on ${event.requestContext.http.method} ${event.rawPath}:`,
        result.error,
      );
      res.writeHead(500, { 'content-type': 'application/json' }).end('{"message":"Internal Server Error"}');
      return;
    }
    writeResult(res, result.value);
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 3000, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const shown = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${shown}:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** The body's bytes, or null past API Gateway's limit. */
async function readBody(req: IncomingMessage): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) return null;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

function toEvent(req: IncomingMessage, body: Buffer, host: string): LocalHttpApiEvent {
  const url = new URL(req.url ?? '/', 'http://local');
  const headers: Record<string, string> = {};
  const cookies: string[] = [];
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    // Payload 2.0 moves cookies to their own list; other repeated headers are joined with commas.
    if (name === 'cookie') cookies.push(...String(value).split(/;\s*/));
    else headers[name] = Array.isArray(value) ? value.join(',') : value;
  }
  const query: Record<string, string> = {};
  for (const [name, value] of url.searchParams) query[name] = name in query ? `${query[name]},${value}` : value;
  const now = new Date();
  const method = req.method ?? 'GET';
  const asText = TEXT.test(headers['content-type'] ?? '') && isUtf8(body);
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: url.pathname,
    rawQueryString: url.search.slice(1),
    ...(cookies.length > 0 ? { cookies } : {}),
    headers,
    ...(url.search.length > 1 ? { queryStringParameters: query } : {}),
    requestContext: {
      accountId: 'local',
      apiId: 'local',
      domainName: headers.host ?? host,
      domainPrefix: (headers.host ?? host).split('.')[0] as string,
      http: {
        method,
        path: url.pathname,
        protocol: `HTTP/${req.httpVersion}`,
        sourceIp: req.socket.remoteAddress ?? '127.0.0.1',
        userAgent: headers['user-agent'] ?? '',
      },
      requestId: randomUUID(),
      routeKey: '$default',
      stage: '$default',
      time: now.toISOString(),
      timeEpoch: now.getTime(),
    },
    ...(body.length > 0 ? { body: asText ? body.toString('utf8') : body.toString('base64') } : {}),
    isBase64Encoded: body.length > 0 && !asText,
  };
}

function isUtf8(bytes: Buffer): boolean {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
}

const TIMED_OUT = Symbol('timed out');

class Failure {
  constructor(readonly error: unknown) {}
}

/** One invocation: the result, a Failure (a throw, a rejection, a callback error), or TIMED_OUT. */
function invoke(
  fn: LocalLambdaFunction,
  event: LocalHttpApiEvent,
  timeoutMs: number,
  functionName: string,
): Promise<{ value: unknown } | Failure | typeof TIMED_OUT> {
  return new Promise((resolve) => {
    const deadline = Date.now() + timeoutMs;
    let done = false;
    const finish = (outcome: { value: unknown } | Failure | typeof TIMED_OUT) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve(outcome);
    };
    const timer = setTimeout(() => finish(TIMED_OUT), timeoutMs);
    const settle = (error?: Error | string | null, value?: unknown) =>
      finish(error === undefined || error === null ? { value } : new Failure(error));
    const context: LocalLambdaContext = {
      callbackWaitsForEmptyEventLoop: true,
      functionName,
      functionVersion: '$LATEST',
      invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${functionName}`,
      memoryLimitInMB: '128',
      awsRequestId: event.requestContext.requestId,
      logGroupName: `/aws/lambda/${functionName}`,
      logStreamName: 'local',
      getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
      done: settle,
      fail: (error) => settle(error),
      succeed: (value) => settle(null, value),
    };
    try {
      const returned = fn(event, context, settle);
      // An async handler's promise settles it; a callback handler returns nothing and calls back.
      if (typeof (returned as PromiseLike<unknown> | undefined)?.then === 'function')
        (returned as Promise<unknown>).then(
          (value) => settle(null, value),
          (error: unknown) => finish(new Failure(error)),
        );
    } catch (error) {
      finish(new Failure(error));
    }
  });
}

/** The function's result as API Gateway (payload 2.0) turns it into an HTTP answer. */
function writeResult(res: ServerResponse, value: unknown): void {
  const structured =
    value !== null && typeof value === 'object' && typeof (value as { statusCode?: unknown }).statusCode === 'number';
  if (!structured) {
    // API Gateway sends any other value as JSON with 200 (a string as it is).
    const text = typeof value === 'string' ? value : JSON.stringify(value ?? null);
    res.writeHead(200, { 'content-type': 'application/json' }).end(text);
    return;
  }
  const r = value as {
    statusCode: number;
    headers?: Record<string, string | number | boolean>;
    multiValueHeaders?: Record<string, (string | number | boolean)[]>;
    cookies?: string[];
    body?: string;
    isBase64Encoded?: boolean;
  };
  const headers: Record<string, string | string[]> = {};
  for (const [name, v] of Object.entries(r.multiValueHeaders ?? {})) headers[name.toLowerCase()] = v.map(String);
  for (const [name, v] of Object.entries(r.headers ?? {})) headers[name.toLowerCase()] = String(v);
  if (r.cookies !== undefined && r.cookies.length > 0) headers['set-cookie'] = r.cookies;
  const body = r.body === undefined ? '' : r.isBase64Encoded ? Buffer.from(r.body, 'base64') : r.body;
  res.writeHead(r.statusCode, headers).end(body);
}
