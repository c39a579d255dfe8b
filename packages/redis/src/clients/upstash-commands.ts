import type { RedisCommands } from './redis-commands.js';
import { textOrNull } from './redis-commands.js';

/**
 * An `@upstash/redis` client (Redis over HTTPS: edge runtimes, no TCP), as the store uses it.
 *
 * @example
 * ```ts
 * import { Redis } from '@upstash/redis';
 * const client: UpstashLike = Redis.fromEnv();
 * ```
 */
export interface UpstashLike {
  set(...args: never[]): Promise<unknown>;
  pttl(key: string): Promise<number>;
  eval(...args: never[]): Promise<unknown>;
  pipeline(): unknown;
}

type Send = (...args: unknown[]) => Promise<unknown>;

/** Whether `client` looks like @upstash/redis (checked after ioredis and node-redis, which have more). */
export function isUpstashLike(client: object): client is UpstashLike {
  const c = client as Partial<UpstashLike>;
  return typeof c.eval === 'function' && typeof c.pipeline === 'function' && typeof c.set === 'function';
}

export function upstashCommands(client: UpstashLike): RedisCommands {
  const set = client.set.bind(client) as unknown as Send;
  const evaluate = client.eval.bind(client) as unknown as Send;
  return {
    setNxPxGet: async (key, value, ms) => textOrNull(await set(key, value, { px: ms, nx: true, get: true })),
    setPxGet: async (key, value, ms) => textOrNull(await set(key, value, { px: ms, get: true })),
    pttl: (key) => client.pttl(key),
    script: (script, key, args) => evaluate(script.lua, [key], args.map(String)),
  };
}
