import type { WebhookResponse } from '@service-pay/core';
import type { LambdaEventKind } from './lambda-event.js';

/**
 * What the handler returns: the shape API Gateway (both payload versions), Function URLs and ALB take, with
 * `multiValueHeaders` for an ALB target group that has multi-value headers turned on. Assignable to
 * `APIGatewayProxyResult`, `APIGatewayProxyStructuredResultV2` and `ALBResult` of `@types/aws-lambda`.
 *
 * @example
 * ```ts
 * const result: LambdaHttpResult = { statusCode: 200, headers: { 'content-type': 'application/json' }, body: '{"received":true}' };
 * ```
 */
export interface LambdaHttpResult {
  statusCode: number;
  /** ALB only: e.g. `'200 OK'`. */
  statusDescription?: string;
  headers?: Record<string, string>;
  multiValueHeaders?: Record<string, string[]>;
  body: string;
  isBase64Encoded: boolean;
}

const REASONS: Record<number, string> = {
  200: 'OK',
  400: 'Bad Request',
  401: 'Unauthorized',
  405: 'Method Not Allowed',
  409: 'Conflict',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Entity',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

/** The core's answer in the shape the event's source expects. */
export function toLambdaResult(answer: WebhookResponse, kind: LambdaEventKind, multiValue: boolean): LambdaHttpResult {
  const result: LambdaHttpResult = { statusCode: answer.status, body: answer.body, isBase64Encoded: false };
  if (kind === 'alb') result.statusDescription = `${answer.status} ${REASONS[answer.status] ?? ''}`.trimEnd();
  // Connection is hop-by-hop: API Gateway and ALB own the client's connection, and drop or refuse it.
  const headers = Object.entries(answer.headers).filter(([name]) => name.toLowerCase() !== 'connection');
  // An ALB target group with multi-value headers turned on reads only multiValueHeaders.
  if (multiValue) result.multiValueHeaders = Object.fromEntries(headers.map(([name, value]) => [name, [value]]));
  else result.headers = Object.fromEntries(headers);
  return result;
}
