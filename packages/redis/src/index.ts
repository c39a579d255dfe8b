export { type FailFastOptions, failFastClusterOptions, failFastRedisOptions } from './client-options.js';
export { RedisDedupeStore, type RedisDedupeStoreOptions, RedisStoreTimeoutError } from './redis-dedupe-store.js';
