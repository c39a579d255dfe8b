import { WebhookError, type WebhookRequest } from '@service-pay/core';

/**
 * The HTTP events a webhook reaches Lambda with, as far as the handler reads them: API Gateway REST APIs
 * (payload 1.0), HTTP APIs and Function URLs (payload 2.0), and Application Load Balancer targets. Written
 * out here, structurally, so an app needs no `@types/aws-lambda` to compile; those types' events are
 * assignable to it (tested).
 *
 * @example
 * ```ts
 * const event: LambdaHttpEvent = { version: '2.0', requestContext: { http: { method: 'POST' } }, headers: {}, body: '{}' };
 * ```
 */
export interface LambdaHttpEvent {
  /** `'2.0'` for HTTP APIs and Function URLs; `'1.0'` or absent for REST APIs and ALB. */
  version?: string | undefined;
  /** Payload 1.0 and ALB. */
  httpMethod?: string | undefined;
  /** Each source's own context; only `http.method` (payload 2.0) and `elb` (ALB) are read. */
  requestContext?: object | null | undefined;
  headers?: Record<string, string | undefined> | null | undefined;
  /** Payload 1.0, and ALB with multi-value headers turned on. */
  multiValueHeaders?: Record<string, string[] | undefined> | null | undefined;
  body?: string | null | undefined;
  isBase64Encoded?: boolean | undefined;
}

/** What the handler reads of a `requestContext`. */
interface RequestContext {
  http?: { method?: unknown };
  elb?: unknown;
}

/** Which of the shapes an event has: it decides the shape of the answer too. */
export type LambdaEventKind = 'rest-api' | 'http-api' | 'alb';

/**
 * An invocation that is not one of the HTTP events above (a test event from the console, an SQS batch, a
 * direct `Invoke`): there is no HTTP caller to answer, so the invocation fails with this, naming the fix.
 *
 * @example
 * ```ts
 * try { await handler({} as never); } catch (error) { if (error instanceof LambdaEventError) console.error(error.code); }
 * ```
 */
export class LambdaEventError extends Error {
  override readonly name = 'LambdaEventError';
  readonly code = 'UNRECOGNIZED_EVENT';
}

/** Tells the event's shape apart, or says why it is none of them. */
export function eventKind(event: unknown): LambdaEventKind {
  if (event === null || typeof event !== 'object') {
    throw new LambdaEventError(
      `@service-pay/lambda: the function was invoked with ${event === null ? 'null' : typeof event}, not an HTTP event. Put it behind an API Gateway REST or HTTP API, a Function URL or an ALB.`,
    );
  }
  const e = event as LambdaHttpEvent;
  const context = e.requestContext as RequestContext | null | undefined;
  if (context?.elb !== undefined && typeof e.httpMethod === 'string') return 'alb';
  if (e.version === '2.0' && typeof context?.http?.method === 'string') return 'http-api';
  if (typeof e.httpMethod === 'string') return 'rest-api';
  throw new LambdaEventError(
    '@service-pay/lambda: the event is not an API Gateway (REST or HTTP API), Function URL or ALB request: it has no httpMethod or requestContext.http.method. Put the function behind one of them (a console test event needs one of their shapes).',
  );
}

/**
 * The core's view of the request: the method, the headers (multi-value ones as lists, so a header sent
 * twice is refused rather than one copy picked) and the body's exact bytes, decoded from base64 when the
 * event says so.
 */
export function toWebhookRequest(event: LambdaHttpEvent, kind: LambdaEventKind): WebhookRequest {
  const method =
    kind === 'http-api'
      ? ((event.requestContext as RequestContext).http?.method as string)
      : (event.httpMethod as string);
  const body = event.body ?? '';
  return {
    method: method.toUpperCase(),
    headers: byLowerCaseName(event.multiValueHeaders ?? event.headers ?? {}),
    rawBody: event.isBase64Encoded === true ? base64Body(body) : body,
  };
}

/**
 * The headers under lower-case names. REST APIs and ALB keep names as sent, so one header can arrive under
 * two spellings (`X-Service-Signature` and `x-service-signature`), and a lookup would read one of them and
 * never see the other. Their values are joined in one list instead, which the core refuses as a header sent
 * twice, as it does on Node (which lower-cases names itself).
 */
function byLowerCaseName(
  headers: Readonly<Record<string, string | readonly string[] | undefined>>,
): Record<string, string | readonly string[]> {
  // No prototype: a header named __proto__ is a header like any other.
  const merged: Record<string, string | readonly string[]> = Object.create(null);
  for (const name of Object.keys(headers)) {
    const value = headers[name];
    if (value === undefined || value === null) continue;
    const key = name.toLowerCase();
    const before = merged[key];
    merged[key] = before === undefined ? value : [...listOf(before), ...listOf(value)];
  }
  return merged;
}

const listOf = (value: string | readonly string[]): readonly string[] => (typeof value === 'string' ? [value] : value);

/**
 * The bytes of a base64 body, or (when it is not strict base64) a body reader that refuses it. Node's
 * decoder skips what is not base64 and stops at the first `=`, so junk around the encoded delivery still
 * decoded to the signed bytes; the body is taken only if it is exactly how those bytes encode: the
 * alphabet, whole quads and the padding they need, nothing else (no line breaks: Lambda never wraps it).
 */
function base64Body(text: string): Uint8Array | (() => Promise<never>) {
  const bytes = Buffer.from(text, 'base64');
  if (bytes.toString('base64') === text) return new Uint8Array(bytes);
  // A reader, so that the core refuses it in its order (after method and headers) with its logging.
  return () =>
    Promise.reject(
      new WebhookError(
        'INVALID_PAYLOAD',
        'The body is marked isBase64Encoded but is not valid base64 (only A-Z a-z 0-9 + /, padded with = to whole quads).',
      ),
    );
}
