import { join } from 'node:path';
import { count, oneOf, text } from '../../config/settingSchemas.js';
import { defineSettings, type EnvRecord, readSettings, throwIfProblems } from '../../config/settings.js';
import type { Logger } from '../../logging/logger.js';
import type { TroupeStore } from '../../ports/store.js';
import { createMemoryStore, type MemoryStoreOptions } from './memory/memoryStore.js';
import { openSqliteStore, type SqliteStoreOptions } from './sqlite/sqliteStore.js';

const kinds = ['sqlite', 'mongodb', 'memory'] as const;
type StoreKind = (typeof kinds)[number];

/** The environment variables that choose and place the store, with defaults and docs. */
export const storeSettings = defineSettings({
  TROUPE_STORE: {
    key: 'kind',
    schema: oneOf(kinds),
    shown: 'sqlite (mongodb when MONGODB_URI is set)',
    doc: '`sqlite` (a file under TROUPE_DATA_DIR, shared by several processes on one machine, each channel handled by one of them at a time), `mongodb` (needs `MONGODB_URI`) or `memory` (nothing survives a restart).',
  },
  TROUPE_DATA_DIR: {
    key: 'dataDir',
    schema: text,
    default: './.troupe',
    doc: 'Directory of the SQLite store (`troupe.db`); created if missing.',
  },
  TROUPE_SQLITE_BUSY_TIMEOUT_MS: {
    key: 'busyTimeoutMs',
    schema: count(0, 600_000, 'milliseconds'),
    shown: '`5000`',
    doc: 'How long a SQLite write waits for another process holding the store before failing with `TROUPE_STORE_BUSY` (a whole number of milliseconds, 0 to 600000).',
  },
  MONGODB_URI: {
    key: 'mongoUri',
    schema: text,
    secret: true,
    doc: 'MongoDB connection string; when set (and TROUPE_STORE is not), the store is MongoDB. Never logged.',
  },
  MONGODB_DATABASE: {
    key: 'mongoDatabase',
    schema: text,
    shown: '`troupe`',
    doc: 'MongoDB database name.',
  },
});

/** The store settings, parsed: which store, and where. */
export interface StoreConfig {
  kind: StoreKind;
  dataDir: string;
  /** Unset: the SQLite store's own default. */
  busyTimeoutMs?: number;
  mongoUri?: string;
  mongoDatabase?: string;
}

/**
 * Reads {@link storeSettings}: MongoDB when `MONGODB_URI` is set and `TROUPE_STORE` is not,
 * else SQLite.
 * @throws ConfigError naming every bad variable at once (never quoting `MONGODB_URI`).
 */
export function storeFromEnv(env: EnvRecord): StoreConfig {
  const { value, problems } = readSettings(storeSettings, env);
  const kind = value.kind ?? (value.mongoUri ? 'mongodb' : 'sqlite');
  if (kind === 'mongodb' && !value.mongoUri && !problems.some((p) => p.variable === 'TROUPE_STORE'))
    problems.push({
      variable: 'MONGODB_URI',
      value: '',
      expected: 'a MongoDB connection string, required by TROUPE_STORE=mongodb',
    });
  throwIfProblems(problems);
  const config: StoreConfig = { kind, dataDir: value.dataDir };
  if (value.busyTimeoutMs !== undefined) config.busyTimeoutMs = value.busyTimeoutMs;
  if (value.mongoUri) config.mongoUri = value.mongoUri;
  if (value.mongoDatabase) config.mongoDatabase = value.mongoDatabase;
  return config;
}

/** How each kind of store is opened; tests replace them (MongoDB needs a server). */
export interface StoreOpeners {
  memory: (options: MemoryStoreOptions) => TroupeStore;
  sqlite: (options: SqliteStoreOptions) => Promise<TroupeStore>;
  mongodb: (options: { uri: string; database?: string; logger?: Logger }) => Promise<TroupeStore>;
}

const defaultOpeners: StoreOpeners = {
  memory: createMemoryStore,
  sqlite: openSqliteStore,
  // Loaded on demand, so a SQLite or memory setup never loads the MongoDB driver.
  mongodb: async (options) => (await import('./mongo/mongoStore.js')).openMongoStore(options),
};

/** The SQLite store's file in a data directory (`<dir>/troupe.db`). */
export function sqliteStorePath(dataDir: string): string {
  return join(dataDir, 'troupe.db');
}

/** Where local data lives: `TROUPE_DATA_DIR`, else `./.troupe`. @throws ConfigError */
export function defaultDataDir(env: EnvRecord): string {
  return storeFromEnv(env).dataDir;
}

/** `TROUPE_SQLITE_BUSY_TIMEOUT_MS`, or `undefined` when unset (the store's default). @throws ConfigError */
export function sqliteBusyTimeoutFromEnv(env: EnvRecord): number | undefined {
  return storeFromEnv(env).busyTimeoutMs;
}

/** Which store the environment asks for (see {@link storeSettings}). @throws ConfigError */
export function storeKindFromEnv(env: EnvRecord): StoreKind {
  return storeFromEnv(env).kind;
}

/**
 * Opens the store the environment asks for: MongoDB when `MONGODB_URI` is set, SQLite at
 * `<TROUPE_DATA_DIR>/troupe.db` otherwise, or memory with `TROUPE_STORE=memory`.
 * @throws ConfigError for a bad `TROUPE_STORE` or `TROUPE_SQLITE_BUSY_TIMEOUT_MS`; TroupeError `TROUPE_STORE_*` when it cannot open.
 */
export async function openDefaultStore(
  env: EnvRecord,
  options: { logger?: Logger; openers?: Partial<StoreOpeners> } = {},
): Promise<TroupeStore> {
  const openers = { ...defaultOpeners, ...options.openers };
  const { logger } = options;
  const config = storeFromEnv(env);
  switch (config.kind) {
    case 'memory':
      logger?.info({ store: 'memory' }, 'store: memory (nothing survives a restart)');
      return openers.memory({});
    case 'mongodb': {
      const database = config.mongoDatabase;
      const store = await openers.mongodb({
        uri: config.mongoUri ?? '',
        ...(database ? { database } : {}),
        ...(logger ? { logger } : {}),
      });
      logger?.info({ store: 'mongodb', ...(database ? { database } : {}) }, 'store: MongoDB');
      return store;
    }
    default: {
      const path = sqliteStorePath(config.dataDir);
      const { busyTimeoutMs } = config;
      const store = await openers.sqlite({
        path,
        ...(busyTimeoutMs !== undefined ? { busyTimeoutMs } : {}),
        ...(logger ? { logger } : {}),
      });
      logger?.info({ store: 'sqlite', path }, `store: SQLite at ${path}`);
      return store;
    }
  }
}
