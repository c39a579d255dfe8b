import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A started test server: its URL, the Node server, and `close()`, which also drops kept-alive connections. */
export interface TestServer {
  url: string;
  server: Server;
  close(): Promise<void>;
}

/**
 * The whole body of `req`, as bytes.
 *
 * @example
 * ```ts
 * const body = (await readBody(req)).toString('utf8');
 * ```
 */
export async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/**
 * A real HTTP server on 127.0.0.1 and a free port. A handler that throws answers 500 with the error.
 *
 * @example
 * ```ts
 * const server = await startServer((req, res) => void res.end('ok'));
 * await fetch(server.url);
 * await server.close();
 * ```
 */
export async function startServer(
  handler: (req: IncomingMessage, res: ServerResponse) => void | Promise<void>,
): Promise<TestServer> {
  const server = createServer((req, res) => {
    Promise.resolve(handler(req, res)).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500).end(String(error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * A port that refuses connections: bound once, then released.
 *
 * @example
 * ```ts
 * const url = `http://127.0.0.1:${await closedPort()}/webhook`;
 * ```
 */
export async function closedPort(): Promise<number> {
  const s = await startServer(() => undefined);
  const port = Number(new URL(s.url).port);
  await s.close();
  return port;
}
