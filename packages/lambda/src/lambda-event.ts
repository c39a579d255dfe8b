import type { WebhookRequest } from '@service-pay/core';

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
  const headers = event.multiValueHeaders ?? event.headers ?? {};
  const body = event.body ?? '';
  return {
    method: method.toUpperCase(),
    headers,
    rawBody: event.isBase64Encoded === true ? new Uint8Array(Buffer.from(body, 'base64')) : body,
  };
}
