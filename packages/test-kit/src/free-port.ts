import { createServer } from 'node:net';

/**
 * A TCP port nothing listened on a moment ago on 127.0.0.1: bound to port 0, read, released. Another
 * process may take it in between; the servers started on it fail to bind then, and say so.
 *
 * @example
 * ```ts
 * const port = await freePort();
 * ```
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
