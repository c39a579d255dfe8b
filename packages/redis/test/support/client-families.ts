import { Redis as UpstashRedis } from '@upstash/redis';
import { Redis as Valkey } from 'iovalkey';
import { createClient } from 'redis';
import type { RedisClient } from '../../src/index.js';
import { UpstashBridge } from './upstash-bridge.js';

/** How long a test's cleanup lets node-redis answer what it has queued before it drops the connection. */
const CLOSE_WAIT_MS = 2_000;

/**
 * node-redis' `close()` resolves once every queued command is answered and has no bound of its own: after an
 * outage, a command left on a connection that does not answer keeps it waiting, and a test's cleanup must
 * not outlive the test (an outage row of a whole CI run was timed out at 60 s, its cause unsaid). Closed
 * gracefully when it can be, dropped (`destroy`) when it cannot within `waitMs`.
 */
async function closeWithin(client: ReturnType<typeof createClient>, waitMs: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), waitMs);
  });
  const closed = await Promise.race([
    client.close().then(
      () => true,
      () => false,
    ),
    late,
  ]);
  clearTimeout(timer);
  if (!closed && client.isOpen) client.destroy();
}

// Every client family beside ioredis, made the way each README says: node-redis 5, iovalkey, and
// @upstash/redis through a local bridge that speaks Upstash's REST protocol (a stand-in, not Upstash).

/** A client as an app makes it for the store, the way each README says. */
export interface Family {
  name: string;
  open(port: number): Promise<{ client: RedisClient; close(): Promise<void> }>;
}

export const families: Family[] = [
  {
    name: 'node-redis 5 (createClient, disableOfflineQueue)',
    async open(port) {
      const client = createClient({
        socket: {
          host: '127.0.0.1',
          port,
          connectTimeout: 1_000,
          reconnectStrategy: (retries) => Math.min(retries * 50, 500),
        },
        disableOfflineQueue: true,
      });
      client.on('error', () => {}); // outages answer 503; keep the process up
      await client.connect();
      return { client, close: () => closeWithin(client, CLOSE_WAIT_MS) };
    },
  },
  {
    name: 'iovalkey',
    async open(port) {
      const client = new Valkey({
        host: '127.0.0.1',
        port,
        enableOfflineQueue: false,
        maxRetriesPerRequest: 0,
        lazyConnect: true,
      });
      client.on('error', () => {});
      await client.connect();
      return { client, close: async () => client.disconnect() };
    },
  },
  {
    name: '@upstash/redis, through a local REST bridge (not Upstash)',
    async open(port) {
      const bridge = await UpstashBridge.start(port);
      // retry: false, so an outage is one failed request (503 from the pipeline) rather than five.
      const client = new UpstashRedis({ url: bridge.url, token: bridge.token, retry: false, enableTelemetry: false });
      return { client, close: () => bridge.stop() };
    },
  },
];
