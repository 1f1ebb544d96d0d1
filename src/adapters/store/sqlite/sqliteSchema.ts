import { resolve } from 'node:path';
import type Database from 'better-sqlite3';
import type { Logger } from '../../../logging/logger.js';
import { TroupeError } from '../../../ports/troupeError.js';

/**
 * Schema migrations, in order: migration `i` takes the database from `user_version` i to i + 1.
 * Never edit one that shipped; add a new one.
 */
export const sqliteMigrations: readonly string[] = [
  // 1: documents, versioned memory, outbox, event log, counters, processed ids.
  `
  CREATE TABLE documents (
    collection TEXT NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    version INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (collection, key)
  );
  CREATE INDEX documents_idle ON documents (collection, updated_at);
  CREATE TABLE memory_versions (
    namespace TEXT NOT NULL,
    key TEXT NOT NULL,
    version INTEGER NOT NULL,
    value TEXT NOT NULL,
    at INTEGER NOT NULL,
    source TEXT,
    PRIMARY KEY (namespace, key, version)
  );
  CREATE TABLE outbox (
    key TEXT PRIMARY KEY,
    response TEXT NOT NULL,
    recorded_at INTEGER NOT NULL,
    sent_parts TEXT NOT NULL DEFAULT '[]',
    settled TEXT
  );
  CREATE INDEX outbox_unsettled ON outbox (recorded_at) WHERE settled IS NULL;
  CREATE TABLE events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    stream TEXT NOT NULL,
    at INTEGER NOT NULL,
    data TEXT NOT NULL
  );
  CREATE INDEX events_stream ON events (stream, seq);
  CREATE TABLE counters (name TEXT PRIMARY KEY, value NUMERIC NOT NULL) WITHOUT ROWID;
  CREATE TABLE processed (
    scope TEXT NOT NULL,
    id TEXT NOT NULL,
    at INTEGER NOT NULL,
    PRIMARY KEY (scope, id)
  ) WITHOUT ROWID;
  `,
  // 2: channel history (the last lines of each channel, oldest trimmed in batches).
  `
  CREATE TABLE history (
    seq INTEGER PRIMARY KEY,
    channel_id TEXT NOT NULL,
    message_id TEXT NOT NULL,
    at INTEGER NOT NULL,
    author TEXT NOT NULL,
    text TEXT NOT NULL
  );
  CREATE INDEX history_channel ON history (channel_id, seq);
  `,
  // 3: no index of documents by write time. Every document write (a reply's ledger entry, each
  // usage bucket every second) paid for it; the hourly expiry reads the collection's rows instead.
  `
  DROP INDEX IF EXISTS documents_idle;
  `,
  // 4: settlements in their own table, keyed by the entry's id. Settling appended to a row that
  // recording had packed tight (the page split) and moved it out of an index of unsettled entries:
  // every reply paid both. A settlement is now one append; finding the unsettled entries (on start)
  // reads the outbox instead. The entry's id is an INTEGER PRIMARY KEY, its rowid as it was: a
  // rowid alone is renumbered by a dump and restore, and a settlement would move to another entry.
  `
  CREATE TABLE outbox_entries (
    id INTEGER PRIMARY KEY,
    key TEXT NOT NULL UNIQUE,
    response TEXT NOT NULL,
    recorded_at INTEGER NOT NULL,
    sent_parts TEXT NOT NULL DEFAULT '[]'
  );
  INSERT INTO outbox_entries (id, key, response, recorded_at, sent_parts)
    SELECT rowid, key, response, recorded_at, sent_parts FROM outbox;
  CREATE TABLE outbox_settled (
    id INTEGER PRIMARY KEY,
    settled TEXT NOT NULL,
    last_part TEXT
  );
  INSERT INTO outbox_settled (id, settled) SELECT rowid, settled FROM outbox WHERE settled IS NOT NULL;
  DROP TABLE outbox;
  ALTER TABLE outbox_entries RENAME TO outbox;
  `,
];

/** The schema version this build writes. */
export const SQLITE_SCHEMA_VERSION = sqliteMigrations.length;

/** Brings the schema up to date in one write transaction; safe when several processes open at once. */
export function migrate(db: Database.Database, path: string, logger: Logger | undefined): number {
  const versionOf = (): number => Number(db.pragma('user_version', { simple: true }));
  const check = (found: number): void => {
    if (found > SQLITE_SCHEMA_VERSION)
      throw new TroupeError(
        'TROUPE_STORE_UNAVAILABLE',
        `Cannot open the SQLite store at ${resolve(path)}: its schema is version ${found}, written by a newer Troupe (this one knows up to ${SQLITE_SCHEMA_VERSION}). Upgrade Troupe or use another file.`,
        { details: { path: resolve(path), schemaVersion: found, supported: SQLITE_SCHEMA_VERSION } },
      );
  };
  const found = versionOf();
  check(found);
  if (found === SQLITE_SCHEMA_VERSION) return found;
  return db
    .transaction(() => {
      const current = versionOf();
      check(current);
      for (let version = current; version < SQLITE_SCHEMA_VERSION; version++) {
        db.exec(sqliteMigrations[version] as string);
        db.pragma(`user_version = ${version + 1}`);
        logger?.info({ path, schemaVersion: version + 1 }, 'SQLite store schema migrated');
      }
      return SQLITE_SCHEMA_VERSION;
    })
    .immediate();
}
