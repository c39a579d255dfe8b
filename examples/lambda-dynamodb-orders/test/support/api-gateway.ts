import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import lambdaLocal from 'lambda-local';
import type { HttpApiEvent } from '../../src/handler.ts';

/**
 * A local stand-in for API Gateway's HTTP API: each HTTP request becomes a payload 2.0 event, run through
 * lambda-local (a Lambda runtime emulator from npm) against the function module, and the function's result
 * becomes the HTTP answer. The body is passed base64-encoded, as API Gateway does for bytes it does not
 * take for text, so the webhook's signature is checked on the exact bytes sent.
 */
export async function startApiGateway(
  fn: { handler: (event: HttpApiEvent) => Promise<unknown> },
  environment: Record<string, string>,
): Promise<{ url: string; close: () => Promise<void> }> {
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const url = new URL(req.url ?? '/', 'http://gateway');
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(',') : value;
    }
    const event: HttpApiEvent & Record<string, unknown> = {
      version: '2.0',
      routeKey: '$default',
      rawPath: url.pathname,
      rawQueryString: url.search.slice(1),
      headers,
      requestContext: { http: { method: req.method ?? 'GET', path: url.pathname } },
      body: Buffer.concat(chunks).toString('base64'),
      isBase64Encoded: true,
    };
    try {
      const result = (await lambdaLocal.execute({
        event,
        lambdaFunc: fn,
        lambdaHandler: 'handler',
        environment,
        timeoutMs: 10_000,
        verboseLevel: 0,
      })) as { statusCode: number; headers?: Record<string, string>; body?: string; isBase64Encoded?: boolean };
      const body = result.isBase64Encoded ? Buffer.from(result.body ?? '', 'base64') : (result.body ?? '');
      res.writeHead(result.statusCode, result.headers ?? {}).end(body);
    } catch (error) {
      res
        .writeHead(502, { 'content-type': 'application/json' })
        .end(JSON.stringify({ message: `Lambda failed: ${(error as Error).message}` }));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
