import type { EnvRecord } from '../config/settings.js';

/**
 * The environment with `--store <dir|mongodb-uri>` applied: a `mongodb://` or `mongodb+srv://`
 * URI sets `MONGODB_URI` (and `TROUPE_STORE=mongodb`), anything else is the SQLite store's
 * directory (`TROUPE_DATA_DIR`, `TROUPE_STORE=sqlite`). Without the flag, the environment as is.
 */
export function envWithStore(env: EnvRecord, store: string | undefined): EnvRecord {
  const given = store?.trim();
  if (!given) return env;
  if (/^mongodb(\+srv)?:\/\//iu.test(given)) return { ...env, TROUPE_STORE: 'mongodb', MONGODB_URI: given };
  return { ...env, TROUPE_STORE: 'sqlite', TROUPE_DATA_DIR: given };
}

/** Where a store is, for people: the SQLite directory or "MongoDB" (never the URI: it may hold a password). */
export function storeWhere(env: EnvRecord, kind: string): string {
  if (kind === 'sqlite') return `SQLite in ${env.TROUPE_DATA_DIR?.trim() || './.troupe'}`;
  return kind === 'mongodb' ? 'MongoDB' : kind;
}
