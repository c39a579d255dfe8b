import { createServer, type IncomingMessage, type Server } from 'node:http';
import { Redis } from 'ioredis';

/**
 * A local HTTP bridge that speaks Upstash's REST protocol to a real Redis: NOT Upstash, a stand-in so that
 * `@upstash/redis` runs in tests without the internet. What it implements, as `@upstash/redis` uses it:
 * `POST /` with a JSON array `["SET", "k", "v", ...]` answers `{ "result": ... }` (or `{ "error": ... }`,
 * status 400); `POST /pipeline` and `POST /multi-exec` take an array of commands and answer an array of
 * those; `Authorization: Bearer <token>` is required (401 otherwise); with `Upstash-Encoding: base64`
 * (the client's default) every string in a result is base64 except `OK`.
 */
export class UpstashBridge {
  private constructor(
    private readonly server: Server,
    private readonly redis: Redis,
    readonly url: string,
    readonly token: string,
  ) {}

  static async start(redisPort: number): Promise<UpstashBridge> {
    const redis = new Redis({
      host: '127.0.0.1',
      port: redisPort,
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
    });
    redis.on('error', () => {});
    await redis.connect().catch(() => {});
    const token = `bridge-${Math.random().toString(36).slice(2)}`;
    const server = createServer((req, res) => {
      void handle(redis, token, req).then(
        ({ status, body }) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body)),
        (error: unknown) => res.writeHead(500).end(JSON.stringify({ error: String(error) })),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    return new UpstashBridge(server, redis, `http://127.0.0.1:${port}`, token);
  }

  async stop(): Promise<void> {
    this.redis.disconnect();
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

async function handle(redis: Redis, token: string, req: IncomingMessage): Promise<{ status: number; body: unknown }> {
  if (req.method !== 'POST') return { status: 405, body: { error: 'POST only' } };
  if (req.headers.authorization !== `Bearer ${token}`) return { status: 401, body: { error: 'Unauthorized' } };
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const command = JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
  const base64 = String(req.headers['upstash-encoding'] ?? '').toLowerCase() === 'base64';
  const path = (req.url ?? '/').split('?')[0];
  if (path === '/pipeline' || path === '/multi-exec') {
    const results = [];
    for (const one of command as unknown[][]) results.push(await run(redis, one, base64));
    return { status: 200, body: results };
  }
  const result = await run(redis, command as unknown[], base64);
  return { status: 'error' in result ? 400 : 200, body: result };
}

async function run(
  redis: Redis,
  command: unknown[],
  base64: boolean,
): Promise<{ result: unknown } | { error: string }> {
  const [name, ...args] = command.map(String);
  try {
    const result = await redis.call(name as string, ...args);
    return { result: base64 ? encode(result) : result };
  } catch (error) {
    return { error: (error as Error).message };
  }
}

function encode(value: unknown): unknown {
  if (typeof value === 'string') return value === 'OK' ? value : Buffer.from(value).toString('base64');
  if (Array.isArray(value)) return value.map(encode);
  return value;
}
