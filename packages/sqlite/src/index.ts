export {
  type BetterSqlite3StoreOptions,
  type SqliteDatabaseLike,
  SqliteStore,
  type SqliteStoreCommonOptions,
  type SqliteStoreConstructor,
} from './sqlite-store.js';
