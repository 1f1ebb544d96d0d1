/**
 * `troupe/sqlite`: the SQLite store (better-sqlite3, WAL), the embedded default, and opening the
 * store the environment names (`TROUPE_STORE`, `TROUPE_DATA_DIR`).
 * @packageDocumentation
 */
export {
  defaultDataDir,
  openDefaultStore,
  type StoreOpeners,
  storeKindFromEnv,
  storeSettings,
} from '../storeFromEnv.js';
export { SQLITE_SCHEMA_VERSION, sqliteMigrations } from './sqliteSchema.js';
export { openSqliteStore, type SqliteStore, type SqliteStoreOptions } from './sqliteStore.js';
