export { MySqlStore, type MySqlStoreOptions } from './mysql-store.js';
