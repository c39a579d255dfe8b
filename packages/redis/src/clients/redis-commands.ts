/**
 * The few commands `RedisDedupeStore` sends, whatever the client: one file per client family
 * (`ioredis-commands.ts`, `node-redis-commands.ts`, `upstash-commands.ts`) maps them onto that client's
 * public API. Each touches one key, so each works on Redis Cluster. A server error rejects with the
 * server's message (`ERR syntax error` included), which is how the store learns an older server's limits.
 */
export interface RedisCommands {
  /** `SET key value PX ms NX GET` (Redis >= 7): null when the key was set, else the value it held. */
  setNxPxGet(key: string, value: string, ms: number): Promise<string | null>;
  /** `SET key value PX ms GET` (Redis >= 6.2): the value it held, or null. */
  setPxGet(key: string, value: string, ms: number): Promise<string | null>;
  /** `PTTL key`. */
  pttl(key: string): Promise<number>;
  /** Runs one of the store's Lua scripts on `key`. */
  script(script: StoreScript, key: string, args: readonly (string | number)[]): Promise<unknown>;
}

/** A Lua script of the store: its name (for clients that register scripts) and its body. */
export interface StoreScript {
  readonly name: string;
  readonly lua: string;
}

/** A reply that should be text: the clients give strings, Buffers or (Upstash, deserializing) other values. */
export function textOrNull(reply: unknown): string | null {
  if (reply === null || reply === undefined) return null;
  if (typeof reply === 'string') return reply;
  if (reply instanceof Uint8Array) return new TextDecoder().decode(reply);
  // @upstash/redis parses replies that look like JSON; the store's values never do, but say so if one did.
  return typeof reply === 'object' ? JSON.stringify(reply) : String(reply);
}
