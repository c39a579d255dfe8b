export { type FailFastOptions, failFastClusterOptions, failFastRedisOptions } from './client-options.js';
export { RedisDedupeStore, type RedisDedupeStoreOptions } from './redis-dedupe-store.js';
