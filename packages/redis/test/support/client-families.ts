import { Redis as UpstashRedis } from '@upstash/redis';
import { Redis as Valkey } from 'iovalkey';
import { createClient } from 'redis';
import { createClient as createClient5 } from 'redis-5';
import type { RedisClient } from '../../src/index.js';
import { UpstashBridge } from './upstash-bridge.js';

/** How long a test's cleanup lets node-redis answer what it has queued before it drops the connection. */
const CLOSE_WAIT_MS = 2_000;

/**
 * node-redis' `close()` resolves once every queued command is answered and has no bound of its own: after an
 * outage, a command left on a connection that does not answer keeps it waiting (node-redis before 5.11 did
 * that after a reset during its handshake), and a test's cleanup must not outlive the test. Closed
 * gracefully when it can be, dropped (`destroy`) when it cannot within `waitMs`.
 */
async function closeWithin(client: NodeRedisClient, waitMs: number): Promise<void> {
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

/** What the tests use of a node-redis client, 6 or 5. */
interface NodeRedisClient {
  on(event: 'error', listener: (error: Error) => void): unknown;
  connect(): Promise<unknown>;
  close(): Promise<unknown>;
  destroy(): void;
  readonly isOpen: boolean;
}

/**
 * node-redis as its README says to make it for the store: fail fast while offline (`disableOfflineQueue`),
 * reconnect on a short schedule; the same options on either major line.
 */
function nodeRedisOptions(port: number) {
  return {
    socket: {
      host: '127.0.0.1',
      port,
      connectTimeout: 1_000,
      reconnectStrategy: (retries: number) => Math.min(retries * 50, 500),
    },
    disableOfflineQueue: true,
  };
}

function nodeRedis(name: string, create: (port: number) => NodeRedisClient & RedisClient): Family {
  return {
    name,
    async open(port) {
      const client = create(port);
      client.on('error', () => {}); // outages answer 503; keep the process up
      await client.connect();
      return { client, close: () => closeWithin(client, CLOSE_WAIT_MS) };
    },
  };
}

// Every client family beside ioredis, made the way each README says: node-redis 6 and 5, iovalkey, and
// @upstash/redis through a local bridge that speaks Upstash's REST protocol (a stand-in, not Upstash).

/** A client as an app makes it for the store, the way each README says. */
export interface Family {
  name: string;
  open(port: number): Promise<{ client: RedisClient; close(): Promise<void> }>;
}

export const families: Family[] = [
  nodeRedis('node-redis 6 (createClient, disableOfflineQueue)', (port) => createClient(nodeRedisOptions(port))),
  nodeRedis('node-redis 5 (createClient, disableOfflineQueue)', (port) => createClient5(nodeRedisOptions(port))),
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
