import type { IncomingHttpHeaders } from 'node:http';
import { WebhookError } from '../errors/webhook-error.js';
import { bodyTimeout, bodyTooLarge, concatBytes } from '../http/body-limit.js';
import { clientDisconnected } from '../http/client-disconnected.js';
import type { RawBody } from '../http/raw-body.js';
import type { WebhookRequest } from '../http/webhook-request.js';
import { timerMs } from '../pipeline/timer-ms.js';

/**
 * The parts of a Node request (`http.IncomingMessage`, Express's `req`, Fastify's `request.raw`, a Next.js
 * Pages API `req`) that reading a webhook needs, plus the body fields frameworks and middleware leave on it.
 *
 * @example
 * ```ts
 * const req: NodeRequestLike = expressRequest; // or an http.IncomingMessage, a Pages API req, ...
 * ```
 */
export interface NodeRequestLike {
  method?: string | undefined;
  headers: IncomingHttpHeaders;
  /** Node >= 18.3: every header as an array, so a header sent twice stays visible instead of comma-joined. */
  headersDistinct?: Record<string, string[] | undefined>;
  /** Set by `express.raw()` (a Buffer), `express.text()` (a string) or a JSON parser (an object). */
  body?: unknown;
  /** The exact bytes, as kept by some platforms and `verify` hooks (Google Cloud Functions, fastify-raw-body). */
  rawBody?: unknown;
  /** `http.IncomingMessage`: the parser has received the whole body (it may still sit in the stream's buffer). */
  complete?: boolean;
  readableEnded?: boolean;
  readableDidRead?: boolean;
  readableFlowing?: boolean | null;
  readableLength?: number;
  read?(): Uint8Array | string | null;
  on(event: string, listener: (...args: never[]) => void): unknown;
  removeListener(event: string, listener: (...args: never[]) => void): unknown;
  resume(): unknown;
}

/**
 * What `readNodeBody` reads from: a Node request (or any readable stream standing for its body), or whatever
 * a framework left in place of the body: bytes are used as they are, a parsed object is refused.
 *
 * @example
 * ```ts
 * const source: NodeBodySource = fastifyRequest.body as NodeBodySource; // the stream its parser handed over
 * ```
 */
export type NodeBodySource = NodeRequestLike | RawBody | object | null | undefined;

/**
 * How to word the RAW_BODY_UNAVAILABLE message for one framework: the one fix its users need.
 *
 * @example
 * ```ts
 * const options: ReadNodeBodyOptions = { fix: 'Mount serviceWebhook() before express.json().' };
 * ```
 */
export interface ReadNodeBodyOptions {
  fix?: string;
  /** Longest wait for the rest of a body still arriving, in ms (the handler's `bodyTimeoutMs`). Default: none. */
  timeoutMs?: number | undefined;
}

/**
 * Options of `toWebhookRequest`: the RAW_BODY_UNAVAILABLE wording, and where the body is when a framework
 * hands it over apart from the request (Fastify gives its content-type parser a payload stream).
 *
 * @example
 * ```ts
 * const options: ToWebhookRequestOptions = { fix: 'Let this route read its own body.', body: request.body };
 * ```
 */
export interface ToWebhookRequestOptions extends ReadNodeBodyOptions {
  /** Read this instead of `req` itself; `undefined` means `req`. */
  body?: NodeBodySource;
}

const DEFAULT_FIX =
  'Mount the webhook route before any JSON body parser, or turn that parser off for this route, so the exact bytes reach it.';

/**
 * Gives the exact bytes of a Node request body, read at most once and never past `maxBytes`.
 *
 * Bytes a framework already kept (`req.rawBody`, a Buffer or string `req.body`) are used as they are. A body
 * that was parsed into an object, or a stream that something else already read, can no longer be verified:
 * that is answered RAW_BODY_UNAVAILABLE at once instead of waiting for data that will never come. Otherwise
 * the stream is read chunk by chunk; past `maxBytes` the chunks are no longer kept and BODY_TOO_LARGE is
 * thrown right away, while the rest of the upload is discarded as it arrives (what Node does itself for a
 * body nobody reads) so the connection neither stalls nor buffers it.
 *
 * @example
 * ```ts
 * import { createWebhookHandler } from '@service-pay/core';
 * import { readNodeBody } from '@service-pay/core/node';
 *
 * const handle = createWebhookHandler({ secret, onPaymentPaid });
 * http.createServer(async (req, res) => {
 *   const answer = await handle({ method: req.method ?? '', headers: req.headers, rawBody: (max) => readNodeBody(req, max) });
 *   res.writeHead(answer.status, answer.headers).end(answer.body);
 * });
 * ```
 */
export function readNodeBody(
  source: NodeBodySource,
  maxBytes: number,
  options: ReadNodeBodyOptions = {},
): Promise<RawBody> {
  if (isBytes(source)) return Promise.resolve(source);
  if (!isStream(source)) {
    const what =
      source === null || source === undefined ? 'there is no body' : 'the body was already parsed into an object';
    return Promise.reject(unavailable(what, options));
  }
  const req = source;
  if (isBytes(req.rawBody)) return Promise.resolve(req.rawBody);
  if (isBytes(req.body)) return Promise.resolve(req.body);
  // Express 4's parsers leave an empty `{}` on requests they skip, with the stream untouched: that one is read.
  const parsed = req.body !== undefined && req.body !== null && !isEmptyObject(req.body);
  if (parsed || req.readableEnded === true || req.readableDidRead === true) {
    const what =
      req.body === undefined || req.body === null
        ? 'the body stream was already read'
        : 'the body was already parsed into an object';
    return Promise.reject(unavailable(`${what} before this handler ran`, options));
  }
  // Usually the whole body arrived with the headers and waits in the stream's buffer: one read() takes it,
  // without a round of 'data'/'end' events (a few microseconds per request under load).
  if (req.complete === true && req.readableFlowing !== true && typeof req.read === 'function') {
    if ((req.readableLength ?? 0) > maxBytes) {
      req.resume();
      return Promise.reject(bodyTooLarge(maxBytes));
    }
    return Promise.resolve(req.read() ?? new Uint8Array(0));
  }
  return new Promise<RawBody>((resolve, reject) => {
    const chunks: Uint8Array[] = [];
    let total = 0;
    // Only a body still arriving gets a timer (the fast path above needs none). On expiry the rest is
    // dropped as it comes and the 408 goes out with `connection: close`, which ends the socket.
    // Checked here too, for a caller that did not take the value from the handler's options: past the
    // timer's maximum, the timer would fire at once and refuse every body still arriving.
    const timeoutMs = options.timeoutMs === undefined ? undefined : timerMs(options.timeoutMs, 0, 'timeoutMs');
    const timer =
      timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            cleanup();
            chunks.length = 0;
            req.resume();
            reject(bodyTimeout(timeoutMs));
          }, timeoutMs);
    const onData = (chunk: Uint8Array | string) => {
      const bytes = typeof chunk === 'string' ? new TextEncoder().encode(chunk) : chunk;
      total += bytes.byteLength;
      if (total > maxBytes) {
        cleanup();
        chunks.length = 0;
        // Whatever still arrives is dropped as it comes, and only until the 413 (sent with `connection: close`)
        // has gone out and Node closes the socket: nothing past the limit is kept or waited for.
        req.resume();
        reject(bodyTooLarge(maxBytes));
        return;
      }
      chunks.push(bytes);
    };
    const onEnd = () => {
      cleanup();
      resolve(concatBytes(chunks, total));
    };
    // A stream error mid-body is the client resetting the connection: nothing to answer, logged at debug.
    const onError = (error: unknown) => {
      cleanup();
      reject(error instanceof WebhookError ? error : clientDisconnected(error));
    };
    // 'close' before 'end' means the client went away mid-body: fail now rather than wait forever.
    const onClose = () => onError(clientDisconnected());
    const cleanup = () => {
      clearTimeout(timer);
      req.removeListener('data', onData);
      req.removeListener('end', onEnd);
      req.removeListener('error', onError);
      req.removeListener('close', onClose);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}

/**
 * Turns a Node request into the core's `WebhookRequest`: headers as received and a body reader the core
 * calls only once method and headers have passed (a GET or an oversized Content-Length is answered without
 * touching the body).
 *
 * Headers are Node's own `req.headers`. A repeated `X-Service-*` header arrives comma-joined there, and
 * the core's strict parsers still refuse it: a joined signature header has two `t=` items
 * (MALFORMED_SIGNATURE), a joined delivery id is not one `dl_` token, a joined event is not the body's.
 * (`headersDistinct` would say so more plainly, but Node builds it per request, for every header.)
 *
 * @example
 * ```ts
 * import { createWebhookHandler } from '@service-pay/core';
 * import { toWebhookRequest } from '@service-pay/core/node';
 *
 * const handle = createWebhookHandler({ secret, onPaymentPaid });
 * const answer = await handle(toWebhookRequest(req, { fix: 'Turn the body parser off for this route.' }));
 * ```
 */
export function toWebhookRequest(req: NodeRequestLike, options: ToWebhookRequestOptions = {}): WebhookRequest {
  const source = options.body ?? req;
  return {
    method: req.method ?? '',
    headers: req.headers,
    // Bytes a framework already holds go straight in (the core checks their size); anything else is read,
    // or refused, only once the core asks.
    rawBody:
      source instanceof Uint8Array
        ? source
        : (maxBytes, limits) => readNodeBody(source, maxBytes, limits ? { ...options, ...limits } : options),
  };
}

function isStream(value: object | RawBody | null | undefined): value is NodeRequestLike {
  return typeof (value as NodeRequestLike | null)?.on === 'function';
}

function isEmptyObject(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  for (const _ in value) return false;
  return true;
}

function isBytes(value: unknown): value is RawBody {
  return typeof value === 'string' || value instanceof Uint8Array || value instanceof ArrayBuffer;
}

function unavailable(what: string, options: ReadNodeBodyOptions): WebhookError {
  return new WebhookError(
    'RAW_BODY_UNAVAILABLE',
    `The signature is computed over the exact raw body, but ${what}. ${options.fix ?? DEFAULT_FIX}`,
  );
}
