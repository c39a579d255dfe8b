import { samplePaymentPaidEvent } from '@service-pay/core/testing';
import type { APIGatewayProxyHandlerV2 } from 'aws-lambda';
import { afterAll, describe, expect, it } from 'vitest';
import {
  createLambdaHandler,
  type LocalHttpApiEvent,
  type LocalLambdaServer,
  type PaymentPaidEvent,
  serveLambdaLocally,
} from '../src/index.js';
import { SECRET, signedDelivery } from './fixtures/events.js';

// The local stand-in for API Gateway's HTTP API: real HTTP in, one invocation per request, the result out.
const servers: LocalLambdaServer[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

async function serve(...args: Parameters<typeof serveLambdaLocally>): Promise<LocalLambdaServer> {
  const server = await serveLambdaLocally(args[0], { port: 0, ...args[1] });
  servers.push(server);
  return server;
}

describe('serveLambdaLocally', () => {
  it('serves createLambdaHandler: a signed webhook credited once, its duplicate answered as one, a forgery 401', async () => {
    const credited: PaymentPaidEvent[] = [];
    const handler = createLambdaHandler({
      secret: SECRET,
      onPaymentPaid: async (event) => {
        credited.push(event);
      },
      logger: { warn: () => undefined, error: () => undefined },
    });
    const server = await serve(handler);
    const { body, headers } = signedDelivery(samplePaymentPaidEvent({ orderNo: 'local-1' }));
    const post = (h: Record<string, string>) =>
      fetch(`${server.url}/webhooks/service`, { method: 'POST', headers: h, body });
    const first = await post(headers);
    expect([first.status, await first.text()]).toEqual([200, '{"received":true}']);
    const again = await post(headers);
    expect(await again.json()).toEqual({ received: true, duplicate: true });
    const forged = await post({ ...headers, 'x-service-signature': 't=1,v1=00' });
    expect(forged.status).toBe(401);
    expect(credited.map((e) => e.orderNo)).toEqual(['local-1']);
  });

  it('builds the payload 2.0 event as API Gateway does: path, query, cookies, joined headers, text or base64 body', async () => {
    const seen: LocalHttpApiEvent[] = [];
    const server = await serve(async (event) => {
      seen.push(event);
      return { statusCode: 201, headers: { 'x-echo': event.rawPath }, cookies: ['a=1', 'b=2'], body: 'ok' };
    });
    const res = await fetch(`${server.url}/orders/42?x=1&x=2&y=3`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', cookie: 'c=3; d=4', 'x-many': 'one' },
      body: '{"é":1}',
    });
    expect([res.status, res.headers.get('x-echo'), res.headers.getSetCookie(), await res.text()]).toEqual([
      201,
      '/orders/42',
      ['a=1', 'b=2'],
      'ok',
    ]);
    await fetch(`${server.url}/bytes`, {
      method: 'POST',
      headers: { 'content-type': 'application/octet-stream' },
      body: new Uint8Array([0xff, 0x00]),
    });
    const [json, bytes] = seen;
    expect(json).toMatchObject({
      version: '2.0',
      routeKey: '$default',
      rawPath: '/orders/42',
      rawQueryString: 'x=1&x=2&y=3',
      queryStringParameters: { x: '1,2', y: '3' },
      cookies: ['c=3', 'd=4'],
      requestContext: { http: { method: 'PUT', path: '/orders/42' }, stage: '$default' },
      body: '{"é":1}',
      isBase64Encoded: false,
    });
    expect(json?.headers).toMatchObject({ 'content-type': 'application/json', 'x-many': 'one' });
    expect(json?.headers.cookie).toBeUndefined();
    expect(bytes).toMatchObject({ body: Buffer.from([0xff, 0x00]).toString('base64'), isBase64Encoded: true });
  });

  it("answers as API Gateway: a throw 500, a plain value as JSON 200, a callback handler's result, past the timeout 503", async () => {
    const errors: unknown[] = [];
    const original = console.error;
    console.error = (...args: unknown[]) => void errors.push(args);
    try {
      const thrower = await serve(async () => {
        throw new Error('boom');
      });
      const failed = await fetch(thrower.url);
      expect([failed.status, await failed.json()]).toEqual([500, { message: 'Internal Server Error' }]);
      expect(errors).toHaveLength(1);
      const plain = await serve(async () => ({ orders: [] }));
      const value = await fetch(plain.url);
      expect([value.status, await value.json()]).toEqual([200, { orders: [] }]);
      // A handler typed with @types/aws-lambda, written in the callback style.
      const callback: APIGatewayProxyHandlerV2 = (_event, context, cb) => {
        cb(null, { statusCode: 202, body: context.functionName });
      };
      const called = await serve(callback, { functionName: 'shop' });
      const cbAnswer = await fetch(called.url);
      expect([cbAnswer.status, await cbAnswer.text()]).toEqual([202, 'shop']);
      const slow = await serve(() => new Promise(() => undefined), { timeoutMs: 50 });
      const timedOut = await fetch(slow.url);
      expect([timedOut.status, await timedOut.json()]).toEqual([503, { message: 'Service Unavailable' }]);
    } finally {
      console.error = original;
    }
  });

  it('a taken port is an error, not a hang', async () => {
    const first = await serve(async () => ({ statusCode: 204 }));
    await expect(serveLambdaLocally(async () => ({ statusCode: 204 }), { port: first.port })).rejects.toMatchObject({
      code: 'EADDRINUSE',
    });
  });
});
