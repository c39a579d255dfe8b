import type { RedisCommands, StoreScript } from './redis-commands.js';
import { textOrNull } from './redis-commands.js';

/**
 * ioredis `Redis` and `Cluster`, and iovalkey (its fork, with the same API): what the store reads of
 * them. Structural, so the package's types need neither library installed.
 *
 * @example
 * ```ts
 * import { Redis } from 'ioredis';
 * const client: IoredisLike = new Redis();
 * ```
 */
export interface IoredisLike {
  defineCommand(name: string, definition: { numberOfKeys?: number; lua: string }): void;
  set(...args: never[]): Promise<unknown>;
  pttl(key: string): Promise<number>;
}

type Send = (...args: unknown[]) => Promise<unknown>;

// Scripts are defined once per client, however many stores share it: ioredis then sends each body once per
// connection (EVAL) and only its SHA afterwards (EVALSHA), so every call is one round trip.
const defined = new WeakMap<object, Set<string>>();

/** Whether `client` looks like ioredis (or iovalkey). */
export function isIoredisLike(client: object): client is IoredisLike {
  return typeof (client as Partial<IoredisLike>).defineCommand === 'function';
}

export function ioredisCommands(client: IoredisLike): RedisCommands {
  const set = client.set.bind(client) as unknown as Send;
  const scripted = client as unknown as Record<string, Send>;
  let names = defined.get(client);
  if (names === undefined) {
    names = new Set();
    defined.set(client, names);
  }
  const known = names;
  return {
    // `then`, not an async arrow: one promise and one frame fewer on every claim and completion (icount).
    setNxPxGet: (key, value, ms) => set(key, value, 'PX', ms, 'NX', 'GET').then(textOrNull),
    setPxGet: (key, value, ms) => set(key, value, 'PX', ms, 'GET').then(textOrNull),
    pttl: (key) => client.pttl(key),
    script: (script: StoreScript, key, args) => {
      if (!known.has(script.name)) {
        client.defineCommand(script.name, { numberOfKeys: 1, lua: script.lua });
        known.add(script.name);
      }
      return (scripted[script.name] as Send).call(client, key, ...args);
    },
  };
}
