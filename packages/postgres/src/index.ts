export type { PGliteLike, PGliteResults, PGliteTransaction } from './pglite-types.js';
export {
  type PGliteStoreOptions,
  type PostgresPoolOptions,
  PostgresStore,
  type PostgresStoreCommonOptions,
  type PostgresStoreConstructor,
} from './postgres-store.js';
