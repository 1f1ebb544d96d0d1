import { join } from 'node:path';
import { z } from 'zod';
import { ConfigError } from '../../config/configError.js';
import type { Logger } from '../../logging/logger.js';
import type { TroupeStore } from '../../ports/store.js';
import { createMemoryStore, type MemoryStoreOptions } from './memory/memoryStore.js';
import { openSqliteStore, type SqliteStoreOptions } from './sqlite/sqliteStore.js';

type Env = Readonly<Record<string, string | undefined>>;

/** The environment variables that choose and place the store, with defaults and docs. */
export const storeSettings = {
  TROUPE_STORE: {
    default: 'sqlite (mongodb when MONGODB_URI is set)',
    doc: '`sqlite` (a file under TROUPE_DATA_DIR, shared by several processes on one machine, each channel handled by one of them at a time), `mongodb` (needs `MONGODB_URI`) or `memory` (nothing survives a restart).',
  },
  TROUPE_DATA_DIR: {
    default: './.troupe',
    doc: 'Directory of the SQLite store (`troupe.db`); created if missing.',
  },
  TROUPE_SQLITE_BUSY_TIMEOUT_MS: {
    default: '5000',
    doc: 'How long a SQLite write waits for another process holding the store before failing with `TROUPE_STORE_BUSY` (a whole number of milliseconds, 0 to 600000).',
  },
  MONGODB_URI: {
    default: 'unset',
    doc: 'MongoDB connection string; when set (and TROUPE_STORE is not), the store is MongoDB. Never logged.',
  },
  MONGODB_DATABASE: {
    default: 'troupe',
    doc: 'MongoDB database name.',
  },
} as const;

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

const kinds = ['sqlite', 'mongodb', 'memory'] as const;
type StoreKind = (typeof kinds)[number];

/** Where local data lives: `TROUPE_DATA_DIR`, else `./.troupe`. */
export function defaultDataDir(env: Env): string {
  return env.TROUPE_DATA_DIR?.trim() || './.troupe';
}

const busyTimeoutSchema = z.coerce.number().int().min(0).max(600_000);

/** `TROUPE_SQLITE_BUSY_TIMEOUT_MS`, or `undefined` when unset (the store's default). @throws ConfigError */
export function sqliteBusyTimeoutFromEnv(env: Env): number | undefined {
  const raw = env.TROUPE_SQLITE_BUSY_TIMEOUT_MS?.trim();
  if (!raw) return undefined;
  const parsed = busyTimeoutSchema.safeParse(raw);
  if (!parsed.success)
    throw new ConfigError([
      {
        variable: 'TROUPE_SQLITE_BUSY_TIMEOUT_MS',
        value: raw,
        expected: 'a whole number of milliseconds from 0 to 600000',
      },
    ]);
  return parsed.data;
}

/** Which store the environment asks for (see {@link storeSettings}). @throws ConfigError */
export function storeKindFromEnv(env: Env): StoreKind {
  const raw = env.TROUPE_STORE?.trim().toLowerCase();
  const uri = env.MONGODB_URI?.trim();
  if (!raw) return uri ? 'mongodb' : 'sqlite';
  const kind = kinds.find((k) => k === raw);
  if (!kind)
    throw new ConfigError([{ variable: 'TROUPE_STORE', value: raw, expected: `one of ${kinds.join(', ')}` }]);
  if (kind === 'mongodb' && !uri)
    throw new ConfigError([
      {
        variable: 'MONGODB_URI',
        value: '',
        expected: 'a MongoDB connection string, required by TROUPE_STORE=mongodb',
      },
    ]);
  return kind;
}

/**
 * Opens the store the environment asks for: MongoDB when `MONGODB_URI` is set, SQLite at
 * `<TROUPE_DATA_DIR>/troupe.db` otherwise, or memory with `TROUPE_STORE=memory`.
 * @throws ConfigError for a bad `TROUPE_STORE` or `TROUPE_SQLITE_BUSY_TIMEOUT_MS`; TroupeError `TROUPE_STORE_*` when it cannot open.
 */
export async function openDefaultStore(
  env: Env,
  options: { logger?: Logger; openers?: Partial<StoreOpeners> } = {},
): Promise<TroupeStore> {
  const openers = { ...defaultOpeners, ...options.openers };
  const { logger } = options;
  const kind = storeKindFromEnv(env);
  switch (kind) {
    case 'memory':
      logger?.info({ store: 'memory' }, 'store: memory (nothing survives a restart)');
      return openers.memory({});
    case 'mongodb': {
      const database = env.MONGODB_DATABASE?.trim() || undefined;
      const store = await openers.mongodb({
        uri: (env.MONGODB_URI ?? '').trim(),
        ...(database ? { database } : {}),
        ...(logger ? { logger } : {}),
      });
      logger?.info({ store: 'mongodb', ...(database ? { database } : {}) }, 'store: MongoDB');
      return store;
    }
    default: {
      const path = join(defaultDataDir(env), 'troupe.db');
      const busyTimeoutMs = sqliteBusyTimeoutFromEnv(env);
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
