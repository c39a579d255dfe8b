export {
  type BetterSqlite3StoreOptions,
  SqliteStore,
  type SqliteStoreCommonOptions,
  type SqliteStoreConstructor,
} from './sqlite-store.js';
