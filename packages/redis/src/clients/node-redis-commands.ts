import type { RedisCommands } from './redis-commands.js';
import { textOrNull } from './redis-commands.js';

/**
 * A node-redis client (`createClient()`, 5 or 6), as the store uses it: raw commands through `sendCommand`.
 *
 * @example
 * ```ts
 * import { createClient } from 'redis';
 * const client: NodeRedisLike = await createClient({ url: process.env.REDIS_URL }).connect();
 * ```
 */
export interface NodeRedisLike {
  sendCommand(...args: never[]): Promise<unknown>;
}

/**
 * A node-redis cluster (`createCluster()`, 5 or 6): `sendCommand(firstKey, isReadonly, args)` routes by key.
 *
 * @example
 * ```ts
 * import { createCluster } from 'redis';
 * const cluster: NodeRedisClusterLike = await createCluster({ rootNodes: [{ url: 'redis://10.0.0.1:6379' }] }).connect();
 * ```
 */
export interface NodeRedisClusterLike extends NodeRedisLike {
  readonly masters: readonly unknown[];
}

type Send = (...args: unknown[]) => Promise<unknown>;

/** Whether `client` looks like node-redis (a client or a cluster). */
export function isNodeRedisLike(client: object): client is NodeRedisLike {
  return typeof (client as Partial<NodeRedisLike>).sendCommand === 'function';
}

export function nodeRedisCommands(client: NodeRedisLike): RedisCommands {
  const send = client.sendCommand.bind(client) as unknown as Send;
  // A cluster routes by the command's key, given first; a client takes the arguments alone.
  const run = Array.isArray((client as Partial<NodeRedisClusterLike>).masters)
    ? (key: string, args: string[]) => send(key, false, args)
    : (_key: string, args: string[]) => send(args);
  return {
    setNxPxGet: async (key, value, ms) =>
      textOrNull(await run(key, ['SET', key, value, 'PX', String(ms), 'NX', 'GET'])),
    setPxGet: async (key, value, ms) => textOrNull(await run(key, ['SET', key, value, 'PX', String(ms), 'GET'])),
    pttl: async (key) => Number(await run(key, ['PTTL', key])),
    // EVAL with the body each time: scripts are off the usual path (release, extend, and servers older than
    // 7.0), and no SHA-1 has to be computed here.
    script: (script, key, args) => run(key, ['EVAL', script.lua, '1', key, ...args.map(String)]),
  };
}
