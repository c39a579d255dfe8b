import { MemoryDedupeStore } from '@service-pay/core';
import { samplePaymentPaidEvent } from '@service-pay/core/testing';
import type { ALBResult, APIGatewayProxyResult, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { createLambdaHandler, LambdaEventError, type LambdaHttpEvent, type LambdaHttpResult } from '../src/index.js';
import { albEvent, functionUrlEvent, httpApiEvent, restApiEvent, SECRET, signedDelivery } from './fixtures/events.js';

const quiet = { warn: () => {}, error: () => {} };

function setup() {
  const credited: string[] = [];
  const handler = createLambdaHandler({
    secret: SECRET,
    store: new MemoryDedupeStore(),
    logger: quiet,
    onPaymentPaid: async (event) => {
      credited.push(event.paymentId);
    },
  });
  return { handler, credited };
}

type Delivery = ReturnType<typeof signedDelivery>;
const kinds: Array<[string, (d: Delivery) => LambdaHttpEvent]> = [
  ['API Gateway REST API (payload 1.0)', (d) => restApiEvent(d)],
  ['API Gateway REST API, base64 body (binary media types)', (d) => restApiEvent(d, true)],
  ['API Gateway HTTP API (payload 2.0)', (d) => httpApiEvent(d)],
  ['API Gateway HTTP API, base64 body', (d) => httpApiEvent(d, true)],
  ['Function URL (base64 body)', (d) => functionUrlEvent(d)],
  ['ALB', (d) => albEvent(d)],
  ['ALB with multi-value headers, base64 body', (d) => albEvent(d, true, true)],
];

describe.each(kinds)('%s', (_kind, toEvent) => {
  it('credits a signed delivery once and answers its duplicate; a tampered one gets 401', async () => {
    const { handler, credited } = setup();
    const d = signedDelivery();
    const first = await handler(toEvent(d));
    expect(first.statusCode).toBe(200);
    expect(JSON.parse(first.body)).toEqual({ received: true });
    expect(first.isBase64Encoded).toBe(false);
    const again = await handler(toEvent(d));
    expect(JSON.parse(again.body)).toEqual({ received: true, duplicate: true });
    expect(credited).toEqual([d.event.paymentId]);

    const tampered = toEvent({ ...d, body: d.body.replace(d.event.amount, `${d.event.amount}0`) });
    const refused = await handler(tampered);
    expect(refused.statusCode).toBe(401);
    expect(JSON.parse(refused.body).error).toBe('SIGNATURE_MISMATCH');
    expect(credited).toHaveLength(1);
  });
});

describe('the answer in the shape of each source', () => {
  it('REST and HTTP APIs and Function URLs: statusCode, headers, body', async () => {
    const { handler } = setup();
    const result = await handler(httpApiEvent(signedDelivery()));
    expect(result).toEqual({
      statusCode: 200,
      headers: { 'content-type': 'application/json; charset=utf-8' },
      body: '{"received":true}',
      isBase64Encoded: false,
    });
    // The result type fits what Lambda's own types say each source takes.
    const v1: APIGatewayProxyResult = result;
    const v2: APIGatewayProxyStructuredResultV2 = result;
    const alb: ALBResult = result;
    expect([v1, v2, alb]).toHaveLength(3);
  });

  it('ALB: a statusDescription; multiValueHeaders when the target group has them turned on', async () => {
    const { handler } = setup();
    const single = await handler(albEvent(signedDelivery()));
    expect(single).toMatchObject({ statusCode: 200, statusDescription: '200 OK', headers: expect.any(Object) });
    expect(single.multiValueHeaders).toBeUndefined();
    const multi = await handler(albEvent(signedDelivery(), true));
    expect(multi).toMatchObject({
      statusDescription: '200 OK',
      multiValueHeaders: { 'content-type': ['application/json; charset=utf-8'] },
    });
    expect(multi.headers).toBeUndefined();
  });

  it('a refusal keeps its code and status; hop-by-hop Connection is left out (413)', async () => {
    const { handler } = setup();
    const d = signedDelivery();
    const big = { ...d, body: `${d.body}${' '.repeat(70_000)}` };
    const tooLarge: LambdaHttpResult = await handler(httpApiEvent(big));
    expect(tooLarge.statusCode).toBe(413);
    expect(JSON.parse(tooLarge.body).error).toBe('BODY_TOO_LARGE');
    expect(Object.keys(tooLarge.headers ?? {}).map((h) => h.toLowerCase())).not.toContain('connection');
    const get = await handler({ ...restApiEvent(d), httpMethod: 'GET' });
    expect(get.statusCode).toBe(405);
    expect(get.headers?.allow).toBe('POST');
  });

  it('a header sent twice (multi-value) is refused, not one copy picked', async () => {
    const { handler, credited } = setup();
    const d = signedDelivery();
    const event = restApiEvent(d);
    const other = signedDelivery();
    event.multiValueHeaders['X-Service-Signature'] = [
      d.headers['x-service-signature'] as string,
      other.headers['x-service-signature'] as string,
    ];
    const result = await handler(event);
    expect(result.statusCode).toBe(401);
    expect(JSON.parse(result.body).error).toBe('MALFORMED_SIGNATURE');
    expect(credited).toHaveLength(0);
  });
});

describe('an invocation that is not an HTTP event', () => {
  it.each([
    ['a console test event', { key1: 'value1' }],
    ['an SQS batch', { Records: [{ eventSource: 'aws:sqs', body: '{}' }] }],
    ['null', null],
  ])('%s fails the invocation with a coded error naming the fix', async (_what, event) => {
    const { handler, credited } = setup();
    const error = await handler(event as never).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LambdaEventError);
    expect((error as LambdaEventError).code).toBe('UNRECOGNIZED_EVENT');
    expect((error as Error).message).toMatch(/API Gateway|Function URL|ALB/);
    expect(credited).toHaveLength(0);
  });
});

describe('the second review: what the Lambda adapter read leniently', () => {
  it.each([
    ['junk around it', (b64: string) => `!!${b64}??`],
    ['a line break inside', (b64: string) => `${b64.slice(0, 8)}\n${b64.slice(8)}`],
    ['a space inside', (b64: string) => `${b64.slice(0, 8)} ${b64.slice(8)}`],
    ['its padding missing', (b64: string) => b64.replace(/=+$/, '')],
    ['text after the padding', (b64: string) => `${b64}QUJD`],
    ['base64url characters', (b64: string) => b64.replace(/\+/g, '-').replace(/\//g, '_')],
  ])('regression: a base64 body with %s is refused with INVALID_PAYLOAD, never credited', async (_what, spoil) => {
    const { handler, credited } = setup();
    // A delivery whose base64 has padding and both + and / (a byte "?" or ">" third in its group gives them),
    // so that every spoiler changes something: one of three lengths leaves a partial last group.
    const events = ['', 'x', 'xx'].map((pad) =>
      restApiEvent(signedDelivery(samplePaymentPaidEvent({ orderNo: `order-???>>>${pad}` })), true),
    );
    const event = events.find((e) => /^(?=.*\+)(?=.*\/).*=$/.test(e.body as string));
    if (event === undefined) throw new Error('no delivery with a padded base64 body holding + and /');
    const b64 = event.body as string;
    const spoiled = spoil(b64);
    expect(spoiled).not.toBe(b64);
    const result = await handler({ ...event, body: spoiled });
    expect(result.statusCode).toBe(400);
    expect(JSON.parse(result.body).error).toBe('INVALID_PAYLOAD');
    expect(credited).toHaveLength(0);
    // The strict body itself still verifies.
    expect((await handler(event)).statusCode).toBe(200);
  });

  it.each([
    ['headers (REST API, ALB)', 'headers'],
    ['multiValueHeaders (REST API, ALB)', 'multiValueHeaders'],
  ] as const)(
    'regression: a signature header sent twice in two spellings, in %s, is MALFORMED_SIGNATURE',
    async (_what, field) => {
      const { handler, credited } = setup();
      const d = signedDelivery();
      const event = restApiEvent(d);
      const valid = d.headers['x-service-signature'] as string;
      const junk = 't=1,v1=junk';
      if (field === 'headers') {
        event.multiValueHeaders = {} as never; // single-value headers only, as ALB without multi-value sends
        event.headers = { ...event.headers, 'X-Service-Signature': junk, 'x-service-signature': valid };
      } else {
        event.multiValueHeaders = {
          ...event.multiValueHeaders,
          'X-Service-Signature': [junk],
          'x-service-signature': [valid],
        };
      }
      const result = await handler(field === 'headers' ? { ...event, multiValueHeaders: undefined } : event);
      expect(result.statusCode).toBe(401);
      expect(JSON.parse(result.body).error).toBe('MALFORMED_SIGNATURE');
      expect(credited).toHaveLength(0);
    },
  );
});
