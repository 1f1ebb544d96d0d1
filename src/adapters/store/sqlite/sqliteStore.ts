import type { Logger } from '../../../logging/logger.js';
import type { TroupeStore } from '../../../ports/store.js';
import { SqliteConnection } from './sqliteConnection.js';
import { SqliteDocuments } from './sqliteDocuments.js';
import { SqliteEvents } from './sqliteEvents.js';
import { SqliteHistory } from './sqliteHistory.js';
import { SqliteMemory } from './sqliteMemory.js';
import { DEFAULT_OUTBOX_RETENTION_MS, SqliteOutbox } from './sqliteOutbox.js';
import { SqliteProcessed } from './sqliteProcessed.js';

/** Options of {@link openSqliteStore}. */
export interface SqliteStoreOptions {
  /** The database file (its directory is created if missing), or `:memory:`. */
  path: string;
  /** Where the store logs (opening, migrations, checkpoints, writes it lost); none by default. */
  logger?: Logger;
  /**
   * How long a write waits for another process's lock before failing with `TROUPE_STORE_BUSY`
   * (default 5000 ms). It waits queued, the lock tried again on a timer: the event loop runs on.
   */
  busyTimeoutMs?: number;
  /**
   * The largest the database may grow, in bytes (rounded up to whole pages, and never below its
   * size when opened): past it a write fails with `TROUPE_STORE_FULL`, as on a full disk, and
   * writes nothing. Default: only the disk's room limits it.
   */
  maxSizeBytes?: number;
  /** History lines kept per channel (default 200; trimmed in batches, so up to twice that for a while). */
  historyPerChannel?: number;
  /**
   * How long a settled outbox entry is kept after it was recorded (default 7 days, as the MongoDB
   * store's), to recognise a resend of its reply; `Infinity` keeps them all. Deleted by
   * `outbox.expire`, which the runtime's hourly sweep calls.
   */
  outboxRetentionMs?: number;
  /** The clock for writes that give no `at` (default `Date.now`). */
  now?: () => number;
  /**
   * Who checkpoints the write-ahead log (copies it into the database and syncs the disk).
   * `worker` (the default for a file): a worker thread with its own connection, started once the
   * store has committed `afterCommits` times (default 256), asked `delayMs` (default 100 ms) after
   * a commit, one checkpoint at a time; once the log is `restartPages` long (default 16,384
   * pages, 64 MiB) the writer holds back (writes queue, off the event loop) while the worker
   * copies what is left and starts the log over, so a store written all the time keeps a bounded
   * log; after a restart a reader holds up, the next is tried 1 s later, then 2, 4… up to 32 s.
   * The writing thread then checkpoints only past 100,000 pages (about 400 MB),
   * should the worker fall behind. `writer`: the writing connection, every 10,000 pages (about
   * 40 MB), stopping the event loop while it copies them.
   */
  checkpoints?: {
    by: 'worker' | 'writer';
    afterCommits?: number;
    delayMs?: number;
    restartPages?: number;
  };
}

/** The SQLite store: the port, plus where it lives. */
export interface SqliteStore extends TroupeStore {
  /** Always `sqlite`. */
  readonly kind: 'sqlite';
  /** The path it was opened with (`:memory:` for an in-memory database). */
  readonly path: string;
  /** The schema version of the database (`PRAGMA user_version`). */
  readonly schemaVersion: number;
}

/**
 * Opens (creating if needed) the SQLite store: WAL journal, `synchronous = NORMAL` and a busy
 * timeout (waited for without blocking the event loop), so several processes can share the file;
 * the schema is migrated on open. The driver
 * is synchronous; every method still returns a promise, so the port is the same as MongoDB's.
 * The writes of one tick share one transaction, and a write's promise resolves once that
 * transaction has committed; a write that loses a compare-and-set fails alone, one that fails
 * midway (a full disk) fails its whole tick. The write-ahead log is checkpointed on a worker
 * thread (see {@link SqliteStoreOptions.checkpoints}).
 * @throws TroupeError `TROUPE_STORE_UNAVAILABLE` when the file cannot be opened (naming the path
 *   and the reason), `TROUPE_STORE_CORRUPT` when it is not a SQLite database, `TROUPE_STORE_BUSY`
 *   when another process holds it past the busy timeout, `TROUPE_STORE_FULL` when its disk is full.
 *   Every method fails the same way; a failed write writes nothing.
 */
export async function openSqliteStore(options: SqliteStoreOptions): Promise<SqliteStore> {
  const connection = new SqliteConnection(options);
  const documents = new SqliteDocuments(connection);
  return {
    kind: 'sqlite',
    path: options.path,
    schemaVersion: connection.schemaVersion,
    documents,
    memory: new SqliteMemory(connection),
    outbox: new SqliteOutbox(
      connection,
      Math.max(0, options.outboxRetentionMs ?? DEFAULT_OUTBOX_RETENTION_MS),
    ),
    events: new SqliteEvents(connection),
    processed: new SqliteProcessed(connection),
    history: new SqliteHistory(connection, options.historyPerChannel ?? 200),
    async close() {
      await connection.stopCheckpoints();
      connection.close();
    },
  };
}
