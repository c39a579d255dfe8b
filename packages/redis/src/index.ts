export { type FailFastOptions, failFastClusterOptions, failFastRedisOptions } from './client-options.js';
export type { IoredisLike } from './clients/ioredis-commands.js';
export type { NodeRedisClusterLike, NodeRedisLike } from './clients/node-redis-commands.js';
export type { UpstashLike } from './clients/upstash-commands.js';
export { type RedisClient, RedisDedupeStore, type RedisDedupeStoreOptions } from './redis-dedupe-store.js';
