/**
 * `troupe/sqlite`: the SQLite store (better-sqlite3, WAL), the embedded default, and opening the
 * store the environment names (`TROUPE_STORE`, `TROUPE_DATA_DIR`).
 * @packageDocumentation
 */
export {
  openSqliteStore,
  SQLITE_SCHEMA_VERSION,
  type SqliteStore,
  type SqliteStoreOptions,
  sqliteMigrations,
} from './sqliteStore.js';
export {
  defaultDataDir,
  openDefaultStore,
  type StoreOpeners,
  storeKindFromEnv,
  storeSettings,
} from './storeFromEnv.js';
