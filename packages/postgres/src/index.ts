export {
  type PGliteStoreOptions,
  type PostgresPoolOptions,
  PostgresStore,
  type PostgresStoreCommonOptions,
  type PostgresStoreConstructor,
} from './postgres-store.js';
