import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import Database from 'better-sqlite3';
import type { Logger } from '../../logging/logger.js';
import type { HistoryEntry, HistoryStore } from '../../ports/history.js';
import type { Outbox, OutboxEntry, OutboxSettlement } from '../../ports/outbox.js';
import type { OutgoingResponse } from '../../ports/outgoingResponse.js';
import type { SentPart } from '../../ports/routingOutcome.js';
import type {
  DocumentOperation,
  DocumentStore,
  DocumentWrite,
  EventLog,
  LoggedEvent,
  MemoryRecord,
  ProcessedIds,
  StoredDocument,
  TroupeStore,
  VersionedMemory,
} from '../../ports/store.js';
import { TroupeError } from '../../ports/troupeError.js';
import { checkIncrement, checkNumber, copyJson, decodeJson, encodeJson } from './jsonValue.js';
import {
  capacityError,
  capitalise,
  driverError,
  openError,
  osReason,
  type SqliteErrorContext,
} from './sqliteErrors.js';

/** Options of {@link openSqliteStore}. */
export interface SqliteStoreOptions {
  /** The database file (its directory is created if missing), or `:memory:`. */
  path: string;
  logger?: Logger;
  /**
   * How long a write waits for another process's lock before failing with `TROUPE_STORE_BUSY`
   * (default 5000 ms).
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
  /** The clock for writes that give no `at` (default `Date.now`). */
  now?: () => number;
}

/** The SQLite store: the port, plus where it lives. */
export interface SqliteStore extends TroupeStore {
  readonly kind: 'sqlite';
  /** The path it was opened with (`:memory:` for an in-memory database). */
  readonly path: string;
  /** The schema version of the database (`PRAGMA user_version`). */
  readonly schemaVersion: number;
}

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
];

/** The schema version this build writes. */
export const SQLITE_SCHEMA_VERSION = sqliteMigrations.length;

/**
 * Opens (creating if needed) the SQLite store: WAL journal, `synchronous = NORMAL` and a busy
 * timeout, so several processes can share the file; the schema is migrated on open. The driver
 * is synchronous; every method still returns a promise, so the port is the same as MongoDB's.
 * The writes of one tick share one transaction (each in its own savepoint, failing alone), and a
 * write's promise resolves once that transaction has committed.
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
    outbox: new SqliteOutbox(connection),
    events: new SqliteEvents(connection),
    processed: new SqliteProcessed(connection),
    history: new SqliteHistory(connection, options.historyPerChannel ?? 200),
    async close() {
      connection.close();
    },
  };
}

type Row = Record<string, unknown>;

/** Writes made in one tick, waiting for their transaction to commit. */
interface WriteGroup {
  waiting: { resolve: () => void; reject: (error: unknown) => void; operation: string }[];
  /** A write joined since the last look. */
  grew: boolean;
  /** Microtasks waited so far. */
  hops: number;
}

/**
 * Microtasks a group of writes waits at most for more writes to join it: enough for the
 * continuations of one event (a reply's outbox record, its parts, its settlement, history) to
 * share one commit, few enough that a writer never waits on a busy process for long.
 */
const GROUP_MAX_HOPS = 32;

/**
 * When a group of writes commits: after everything the current tick set off (the real
 * `setImmediate`, taken when this module loads, so fake timers installed later cannot stop
 * commits).
 */
const later: (work: () => void) => void =
  typeof globalThis.setImmediate === 'function'
    ? (
        (set) => (work: () => void) =>
          void set(work)
      )(globalThis.setImmediate)
    : queueMicrotask;

/** The connection of this process whose group of writes is open (at most one: they share a thread). */
let groupOwner: SqliteConnection | undefined;

/** One open database: statements cached, errors turned into `TroupeError`s, closing guarded. */
class SqliteConnection {
  readonly now: () => number;
  readonly schemaVersion: number;
  private readonly db: Database.Database;
  private readonly statements = new Map<string, Database.Statement>();
  private readonly inTransaction: Database.Transaction<(work: () => unknown) => unknown>;
  private readonly where: string;
  private readonly errors: SqliteErrorContext;
  private closed = false;
  /** The writes of this tick, in one open transaction until it commits. */
  private group: WriteGroup | undefined;
  private readonly rollbackListeners: (() => void)[] = [];

  constructor(private readonly options: SqliteStoreOptions) {
    this.now = options.now ?? Date.now;
    const { path } = options;
    const inMemory = path === ':memory:' || path === '';
    this.where = inMemory ? 'the in-memory SQLite store' : `the SQLite store at ${resolve(path)}`;
    const busyTimeoutMs = Math.max(0, Math.floor(options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS));
    this.errors = { path, busyTimeoutMs };
    if (!inMemory) prepareDirectory(this.errors);
    try {
      this.db = new Database(path, { timeout: busyTimeoutMs });
    } catch (error) {
      throw openError(error, this.errors);
    }
    try {
      this.db.pragma(`busy_timeout = ${busyTimeoutMs}`);
      this.db.pragma('journal_mode = WAL');
      this.db.pragma('synchronous = NORMAL');
      // Each checkpoint syncs the disk twice: every 10,000 pages (about 40 MB) rather than 1,000.
      this.db.pragma('wal_autocheckpoint = 10000');
      this.schemaVersion = migrate(this.db, path, options.logger);
      if (options.maxSizeBytes !== undefined) limitSize(this.db, options.maxSizeBytes);
    } catch (error) {
      this.db.close();
      throw TroupeError.isInstance(error) ? error : openError(error, this.errors);
    }
    this.inTransaction = this.db.transaction((work: () => unknown) => work());
    options.logger?.debug({ path, schemaVersion: this.schemaVersion }, 'SQLite store opened');
  }

  /** Runs `work` against the database, unless closed; driver errors become `TroupeError`s. */
  run<T>(operation: string, work: () => T): T {
    this.checkOpen(operation);
    if (groupOwner !== undefined && groupOwner !== this) groupOwner.commitNow();
    try {
      return work();
    } catch (error) {
      throw this.failure(error, operation);
    }
  }

  /**
   * Runs a write in this tick's group: the first write of a tick opens a transaction (BEGIN
   * IMMEDIATE), each write runs in a savepoint of it (a write that fails rolls back alone and
   * fails alone), and the group commits once no write has joined it for a microtask (or after
   * {@link GROUP_MAX_HOPS} of them). The promise resolves only once the group has committed, so a
   * caller that awaits a write knows it is stored; a failed commit fails every write of the group.
   * Reads on this connection see the writes of the open group.
   */
  write<T>(operation: string, work: () => T): Promise<T> {
    let value: T;
    let group: WriteGroup;
    try {
      this.checkOpen(operation);
      group = this.group ?? this.openGroup();
      value = this.inTransaction(work) as T;
    } catch (error) {
      return Promise.reject(this.failure(error, operation));
    }
    group.grew = true;
    return new Promise<T>((resolve, reject) => {
      group.waiting.push({ resolve: () => resolve(value), reject, operation });
    });
  }

  /** Calls `listener` when a group of writes could not be committed (to forget what it kept). */
  onRollback(listener: () => void): void {
    this.rollbackListeners.push(listener);
  }

  /** Commits the open group now (another connection of this process needs the file). */
  commitNow(): void {
    if (this.group) this.settleGroup(this.group, true);
  }

  private openGroup(): WriteGroup {
    // Another connection of this process holding a group would keep the lock while this one waits
    // for it on the same thread: commit it first.
    if (groupOwner !== undefined && groupOwner !== this) groupOwner.commitNow();
    this.statement('BEGIN IMMEDIATE').run();
    groupOwner = this;
    const group: WriteGroup = { waiting: [], grew: false, hops: 0 };
    this.group = group;
    later(() => this.settleGroup(group, true));
    return group;
  }

  /** Commits the group once it stops growing (or at once, `force`), then settles its writes. */
  private settleGroup(group: WriteGroup, force: boolean): void {
    if (this.group !== group) return;
    if (!force && group.grew && group.hops < GROUP_MAX_HOPS) {
      group.grew = false;
      group.hops++;
      queueMicrotask(() => this.settleGroup(group, false));
      return;
    }
    this.group = undefined;
    if (groupOwner === this) groupOwner = undefined;
    try {
      this.statement('COMMIT').run();
    } catch (error) {
      try {
        if (this.db.inTransaction) this.statement('ROLLBACK').run();
      } catch {
        // The connection rolls back on its own when it cannot; the writes are reported failed below.
      }
      for (const listener of this.rollbackListeners) listener();
      const operation = group.waiting.map((w) => w.operation).join(', ');
      const failure = this.failure(error, operation || 'commit');
      for (const w of group.waiting) w.reject(failure);
      return;
    }
    for (const w of group.waiting) w.resolve();
  }

  private checkOpen(operation: string): void {
    if (this.closed)
      throw new TroupeError(
        'TROUPE_STORE_UNAVAILABLE',
        `${capitalise(this.where)} is closed; open it again.`,
        {
          retryable: true,
          details: { operation },
        },
      );
  }

  /** A driver error as a `TroupeError` (logged unless the caller reports it). */
  private failure(error: unknown, operation: string): TroupeError {
    if (TroupeError.isInstance(error)) return error;
    const failure = driverError(error, operation, this.errors);
    // A busy or full store is the caller's to report (it says what to do); other failures are logged here.
    const level =
      failure.code === 'TROUPE_STORE_BUSY' || failure.code === 'TROUPE_STORE_FULL' ? 'debug' : 'warn';
    this.options.logger?.[level]({ operation, code: failure.code, cause: String(error) }, failure.message);
    return failure;
  }

  /** A prepared statement, prepared once. */
  statement(sql: string): Database.Statement {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  get(sql: string, ...params: unknown[]): Row | undefined {
    return this.statement(sql).get(...params) as Row | undefined;
  }

  all(sql: string, ...params: unknown[]): Row[] {
    return this.statement(sql).all(...params) as Row[];
  }

  /** Runs a write statement; returns how many rows it changed. */
  change(sql: string, ...params: unknown[]): number {
    return this.statement(sql).run(...params).changes;
  }

  /** Runs `work` in a write transaction taken at once (BEGIN IMMEDIATE), so it never deadlocks on upgrade. */
  transaction<T>(work: () => T): T {
    return this.inTransaction.immediate(work) as T;
  }

  close(): void {
    if (this.closed) return;
    if (this.group) this.settleGroup(this.group, true);
    this.closed = true;
    this.statements.clear();
    try {
      this.db.pragma('optimize');
    } catch {
      // Only a hint to the query planner; closing matters more.
    }
    this.db.close();
    this.options.logger?.debug({ path: this.options.path }, 'SQLite store closed');
  }
}

/** How long a write waits for another process's lock unless told otherwise. */
export const DEFAULT_BUSY_TIMEOUT_MS = 5_000;

/** Caps the database at `bytes` (SQLite's `max_page_count` for this connection). */
function limitSize(db: Database.Database, bytes: number): void {
  const pageSize = Number(db.pragma('page_size', { simple: true }));
  db.pragma(`max_page_count = ${Math.max(1, Math.ceil(bytes / pageSize))}`);
}

/** Creates the database's directory; a path that cannot be used fails here with the OS's reason. */
function prepareDirectory(context: SqliteErrorContext): void {
  const { path } = context;
  const directory = dirname(resolve(path));
  try {
    mkdirSync(directory, { recursive: true });
  } catch (error) {
    const full = capacityError(error, 'creating its directory', context);
    if (full) throw full;
    const reason = osReason(error);
    throw new TroupeError(
      'TROUPE_STORE_UNAVAILABLE',
      `Cannot open the SQLite store at ${resolve(path)}: its directory ${directory} cannot be created (${reason}). Point TROUPE_DATA_DIR at a writable directory.`,
      { retryable: true, cause: error, details: { path: resolve(path), reason } },
    );
  }
}

/** Brings the schema up to date in one write transaction; safe when several processes open at once. */
function migrate(db: Database.Database, path: string, logger: Logger | undefined): number {
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

/** A LIMIT for SQL: -1 for none (no limit or an infinite one). */
function limitOf(limit: number | undefined): number {
  if (limit === undefined || limit === Number.POSITIVE_INFINITY) return -1;
  return Number.isFinite(limit) ? Math.max(0, Math.floor(limit)) : 0;
}

function conflict(kind: string, place: string, expected: number, actual: number): TroupeError {
  return new TroupeError(
    'TROUPE_STORE_CONFLICT',
    `Compare-and-set lost on ${kind} "${place}": expected version ${expected}, found ${actual === 0 ? 'none (0)' : `version ${actual}`}. Someone else wrote first; nothing was written.`,
    { details: { place, expectedVersion: expected, actualVersion: actual } },
  );
}

const DOC_UPSERT = `INSERT INTO documents (collection, key, value, version, updated_at) VALUES (?, ?, ?, 1, ?)
  ON CONFLICT (collection, key) DO UPDATE SET value = excluded.value, version = documents.version + 1, updated_at = excluded.updated_at
  RETURNING version`;
const DOC_CREATE = `INSERT INTO documents (collection, key, value, version, updated_at) VALUES (?, ?, ?, 1, ?)
  ON CONFLICT (collection, key) DO NOTHING RETURNING version`;
const DOC_UPDATE_IF = `UPDATE documents SET value = ?, version = version + 1, updated_at = ?
  WHERE collection = ? AND key = ? AND version = ? RETURNING version`;
const DOC_VERSION = 'SELECT version FROM documents WHERE collection = ? AND key = ?';

class SqliteDocuments implements DocumentStore {
  constructor(private readonly c: SqliteConnection) {}

  async get<T = unknown>(collection: string, key: string): Promise<StoredDocument<T> | undefined> {
    return this.c.run('documents.get', () => {
      const row = this.c.get(
        'SELECT key, value, version, updated_at FROM documents WHERE collection = ? AND key = ?',
        collection,
        key,
      );
      return row ? toDocument<T>(collection, row) : undefined;
    });
  }

  async put<T = unknown>(
    collection: string,
    key: string,
    value: T,
    options: { expectedVersion?: number; at?: number } = {},
  ): Promise<number> {
    const place = `documents "${collection}/${key}"`;
    const json = encodeJson(value, place);
    checkNumber(options.at, 'at', place);
    checkNumber(options.expectedVersion, 'expectedVersion', place);
    return this.c.write('documents.put', () =>
      this.writeOne(collection, key, json, options.expectedVersion, options.at ?? this.c.now()),
    );
  }

  async putMany<T = unknown>(
    collection: string,
    writes: readonly DocumentWrite<T>[],
    at?: number,
  ): Promise<number[]> {
    checkNumber(at, 'at', `documents batch of "${collection}"`);
    const encoded = writes.map((w) => ({
      key: w.key,
      json: encodeJson(w.value, `documents "${collection}/${w.key}"`),
      expectedVersion: checkNumber(
        w.expectedVersion,
        'expectedVersion',
        `documents "${collection}/${w.key}"`,
      ),
    }));
    return this.c.write('documents.putMany', () => {
      if (encoded.length === 0) return [];
      const when = at ?? this.c.now();
      return this.c.transaction(() =>
        encoded.map((w) => this.writeOne(collection, w.key, w.json, w.expectedVersion, when)),
      );
    });
  }

  /** One transaction: a conflict rolls back what the batch wrote before it. */
  async batch(operations: readonly DocumentOperation[], at?: number): Promise<(number | boolean)[]> {
    checkNumber(at, 'at', 'documents batch');
    const encoded = operations.map((o) => {
      const place = `documents "${o.collection}/${o.key}"`;
      checkNumber(o.expectedVersion, 'expectedVersion', place);
      return o.op === 'put' ? encodeJson(o.value, place) : undefined;
    });
    return this.c.write('documents.batch', () => {
      if (operations.length === 0) return [];
      const when = at ?? this.c.now();
      return this.c.transaction(() =>
        operations.map((o, i) =>
          o.op === 'put'
            ? this.writeOne(o.collection, o.key, encoded[i] as string, o.expectedVersion, when)
            : this.deleteOne(o.collection, o.key, o.expectedVersion),
        ),
      );
    });
  }

  /** One write: a single statement, compare-and-set in its WHERE clause. */
  private writeOne(
    collection: string,
    key: string,
    json: string,
    expected: number | undefined,
    at: number,
  ): number {
    let row: Row | undefined;
    if (expected === undefined) row = this.c.get(DOC_UPSERT, collection, key, json, at);
    else if (expected === 0) row = this.c.get(DOC_CREATE, collection, key, json, at);
    else row = this.c.get(DOC_UPDATE_IF, json, at, collection, key, expected);
    if (row) return Number(row.version);
    const actual = Number(this.c.get(DOC_VERSION, collection, key)?.version ?? 0);
    throw conflict('documents', `${collection}/${key}`, expected ?? 0, actual);
  }

  async delete(
    collection: string,
    key: string,
    options: { expectedVersion?: number } = {},
  ): Promise<boolean> {
    return this.c.write('documents.delete', () => this.deleteOne(collection, key, options.expectedVersion));
  }

  private deleteOne(collection: string, key: string, expected: number | undefined): boolean {
    return expected === undefined
      ? this.c.change('DELETE FROM documents WHERE collection = ? AND key = ?', collection, key) > 0
      : this.c.change(
          'DELETE FROM documents WHERE collection = ? AND key = ? AND version = ?',
          collection,
          key,
          expected,
        ) > 0;
  }

  async list<T = unknown>(
    collection: string,
    options: { afterKey?: string; limit?: number; keyPrefix?: string } = {},
  ): Promise<StoredDocument<T>[]> {
    return this.c.run('documents.list', () => {
      const limit = limitOf(options.limit);
      if (limit === 0) return [];
      const where = ['collection = ?'];
      const params: unknown[] = [collection];
      if (options.afterKey !== undefined) {
        where.push('key > ?');
        params.push(options.afterKey);
      }
      if (options.keyPrefix) {
        // The range start uses the index; substr (counted in characters) makes the match literal.
        where.push('key >= ?', 'substr(key, 1, ?) = ?');
        params.push(options.keyPrefix, [...options.keyPrefix].length, options.keyPrefix);
      }
      const sql = `SELECT key, value, version, updated_at FROM documents WHERE ${where.join(' AND ')} ORDER BY key LIMIT ?`;
      return this.c.all(sql, ...params, limit).map((row) => toDocument<T>(collection, row));
    });
  }

  async expireIdle(collection: string, idleBefore: number): Promise<number> {
    return this.c.write('documents.expireIdle', () =>
      this.c.change('DELETE FROM documents WHERE collection = ? AND updated_at < ?', collection, idleBefore),
    );
  }
}

function toDocument<T>(collection: string, row: Row): StoredDocument<T> {
  const key = String(row.key);
  return {
    collection,
    key,
    value: decodeJson<T>(row.value, `documents "${collection}/${key}"`),
    version: Number(row.version),
    updatedAt: Number(row.updated_at),
  };
}

const MEMORY_COLUMNS = 'key, version, value, at, source';

/** Latest versions kept read at most (a profile per namespace and key is what is read). */
const LATEST_KEPT = 256;

class SqliteMemory implements VersionedMemory {
  /**
   * The latest version of each key read or written through this connection, parsed once and
   * handed out as copies (profiles are read on every triage and draft, written far less). Valid
   * while no other connection has committed: SQLite's `data_version` says when one has.
   */
  private readonly latest = new Map<string, MemoryRecord<unknown> | null>();
  private dataVersion = Number.NaN;

  constructor(private readonly c: SqliteConnection) {
    // A version kept from a write whose group did not commit was never stored.
    c.onRollback(() => this.latest.clear());
  }

  /** Forgets the latest versions kept when another connection (or process) has written since. */
  private checkFresh(): void {
    const now = Number(this.c.get('PRAGMA data_version')?.data_version);
    if (now !== this.dataVersion) {
      this.latest.clear();
      this.dataVersion = now;
    }
  }

  /** Keeps the latest version of a key, or that it has none (`null`). */
  private keep(id: string, record: MemoryRecord<unknown> | null): void {
    if (this.latest.size >= LATEST_KEPT) this.latest.clear();
    this.latest.set(id, record);
  }

  async get<T = unknown>(namespace: string, key: string): Promise<MemoryRecord<T> | undefined> {
    return this.c.run('memory.get', () => {
      this.checkFresh();
      const id = latestId(namespace, key);
      const kept = this.latest.get(id);
      if (kept !== undefined) return kept === null ? undefined : copyRecord<T>(kept);
      const row = this.c.get(
        `SELECT ${MEMORY_COLUMNS} FROM memory_versions WHERE namespace = ? AND key = ? ORDER BY version DESC LIMIT 1`,
        namespace,
        key,
      );
      const record = row ? toRecord<T>(namespace, row) : null;
      this.keep(id, record);
      return record ? copyRecord(record) : undefined;
    });
  }

  async put<T = unknown>(
    namespace: string,
    key: string,
    value: T,
    options: { expectedVersion?: number; at?: number; source?: string } = {},
  ): Promise<MemoryRecord<T>> {
    const place = `memory "${namespace}/${key}"`;
    const json = encodeJson(value, place);
    checkNumber(options.at, 'at', place);
    checkNumber(options.expectedVersion, 'expectedVersion', place);
    return this.c.write('memory.put', () => {
      const at = options.at ?? this.c.now();
      const version = this.c.transaction(() => {
        const latest = Number(
          this.c.get(
            'SELECT MAX(version) AS version FROM memory_versions WHERE namespace = ? AND key = ?',
            namespace,
            key,
          )?.version ?? 0,
        );
        if (options.expectedVersion !== undefined && options.expectedVersion !== latest)
          throw conflict('memory', `${namespace}/${key}`, options.expectedVersion, latest);
        this.c.change(
          'INSERT INTO memory_versions (namespace, key, version, value, at, source) VALUES (?, ?, ?, ?, ?, ?)',
          namespace,
          key,
          latest + 1,
          json,
          at,
          options.source ?? null,
        );
        return latest + 1;
      });
      const record = toRecord<T>(namespace, {
        key,
        version,
        value: json,
        at,
        source: options.source ?? null,
      });
      // Written through this connection: the version it reads next (another connection writing
      // after this moves data_version, and the kept versions are forgotten).
      this.keep(latestId(namespace, key), record);
      return copyRecord(record);
    });
  }

  async history<T = unknown>(namespace: string, key: string, limit?: number): Promise<MemoryRecord<T>[]> {
    return this.c.run('memory.history', () =>
      this.c
        .all(
          `SELECT ${MEMORY_COLUMNS} FROM memory_versions WHERE namespace = ? AND key = ? ORDER BY version DESC LIMIT ?`,
          namespace,
          key,
          limitOf(limit),
        )
        .map((row) => toRecord<T>(namespace, row)),
    );
  }

  async list<T = unknown>(namespace: string): Promise<MemoryRecord<T>[]> {
    return this.c.run('memory.list', () =>
      this.c
        .all(
          `SELECT ${MEMORY_COLUMNS} FROM memory_versions AS m WHERE namespace = ?
            AND version = (SELECT MAX(version) FROM memory_versions WHERE namespace = m.namespace AND key = m.key)
            ORDER BY key`,
          namespace,
        )
        .map((row) => toRecord<T>(namespace, row)),
    );
  }
}

/**
 * A kept version's key: the namespace's length first, so a NUL in a namespace or key cannot make
 * two keys one ("a\0b"/"c" and "a"/"b\0c" joined by NUL alone are the same text).
 */
function latestId(namespace: string, key: string): string {
  return `${namespace.length}:${namespace}\0${key}`;
}

function toRecord<T>(namespace: string, row: Row): MemoryRecord<T> {
  const key = String(row.key);
  const version = Number(row.version);
  return {
    namespace,
    key,
    value: decodeJson<T>(row.value, `memory "${namespace}/${key}" version ${version}`),
    version,
    at: Number(row.at),
    ...(row.source !== null && row.source !== undefined ? { source: String(row.source) } : {}),
  };
}

/** A copy of a kept record that a caller may change freely. */
function copyRecord<T>(record: MemoryRecord<unknown>): MemoryRecord<T> {
  return {
    ...record,
    value: copyJson(record.value, `memory "${record.namespace}/${record.key}"`) as T,
  };
}

const OUTBOX_COLUMNS = 'key, response, recorded_at, sent_parts, settled';

class SqliteOutbox implements Outbox {
  constructor(private readonly c: SqliteConnection) {}

  async record(response: OutgoingResponse, at: number): Promise<{ entry: OutboxEntry; created: boolean }> {
    const key = response.idempotencyKey;
    const json = encodeJson(response, `outbox entry "${key}"`);
    checkNumber(at, 'at', `outbox entry "${key}"`);
    return this.c.write('outbox.record', () => {
      const created =
        this.c.change(
          `INSERT INTO outbox (key, response, recorded_at, sent_parts, settled) VALUES (?, ?, ?, '[]', NULL)
            ON CONFLICT (key) DO NOTHING`,
          key,
          json,
          at,
        ) > 0;
      if (created)
        return {
          entry: { key, response: decodeJson(json, `outbox entry "${key}"`), recordedAt: at, sentParts: [] },
          created,
        };
      const row = this.c.get(`SELECT ${OUTBOX_COLUMNS} FROM outbox WHERE key = ?`, key);
      if (!row)
        throw new TroupeError(
          'TROUPE_STORE_CORRUPT',
          `Outbox entry "${key}" vanished while it was recorded.`,
        );
      return { entry: toEntry(row), created };
    });
  }

  async markPartSent(key: string, part: SentPart): Promise<void> {
    const json = encodeJson(part, `outbox part of "${key}"`);
    return this.c.write('outbox.markPartSent', () => {
      // One statement: the part is appended only if no part with its index is there yet.
      this.c.change(
        `UPDATE outbox SET sent_parts = json_insert(sent_parts, '$[#]', json(?))
          WHERE key = ? AND NOT EXISTS (
            SELECT 1 FROM json_each(outbox.sent_parts) AS p WHERE json_extract(p.value, '$.index') = ?)`,
        json,
        key,
        part.index,
      );
    });
  }

  async settle(key: string, settlement: OutboxSettlement): Promise<void> {
    const json = encodeJson(settlement, `outbox settlement of "${key}"`);
    return this.c.write('outbox.settle', () => {
      this.c.change('UPDATE outbox SET settled = ? WHERE key = ? AND settled IS NULL', json, key);
    });
  }

  async unsettled(limit?: number): Promise<OutboxEntry[]> {
    return this.c.run('outbox.unsettled', () =>
      this.c
        .all(
          `SELECT ${OUTBOX_COLUMNS} FROM outbox WHERE settled IS NULL ORDER BY recorded_at, rowid LIMIT ?`,
          limitOf(limit),
        )
        .map(toEntry),
    );
  }

  async get(key: string): Promise<OutboxEntry | undefined> {
    return this.c.run('outbox.get', () => {
      const row = this.c.get(`SELECT ${OUTBOX_COLUMNS} FROM outbox WHERE key = ?`, key);
      return row ? toEntry(row) : undefined;
    });
  }
}

function toEntry(row: Row): OutboxEntry {
  const key = String(row.key);
  const place = `outbox entry "${key}"`;
  return {
    key,
    response: decodeJson<OutgoingResponse>(row.response, place),
    recordedAt: Number(row.recorded_at),
    sentParts: decodeJson<SentPart[]>(row.sent_parts, `${place} (sent parts)`),
    ...(row.settled !== null && row.settled !== undefined
      ? { settled: decodeJson<OutboxSettlement>(row.settled, `${place} (settlement)`) }
      : {}),
  };
}

class SqliteEvents implements EventLog {
  constructor(private readonly c: SqliteConnection) {}

  async append(stream: string, data: Record<string, unknown>, at: number): Promise<void> {
    const json = encodeJson(data, `event of stream "${stream}"`);
    checkNumber(at, 'at', `event of stream "${stream}"`);
    return this.c.write('events.append', () => {
      this.c.change('INSERT INTO events (stream, at, data) VALUES (?, ?, ?)', stream, at, json);
    });
  }

  async read(stream: string, options: { afterSeq?: number; limit?: number } = {}): Promise<LoggedEvent[]> {
    return this.c.run('events.read', () =>
      this.c
        .all(
          'SELECT seq, at, data FROM events WHERE stream = ? AND seq > ? ORDER BY seq LIMIT ?',
          stream,
          options.afterSeq ?? 0,
          limitOf(options.limit),
        )
        .map((row) => ({
          seq: Number(row.seq),
          stream,
          at: Number(row.at),
          data: decodeJson<Record<string, unknown>>(
            row.data,
            `event ${String(row.seq)} of stream "${stream}"`,
          ),
        })),
    );
  }

  async increment(counter: string, by = 1): Promise<number> {
    checkIncrement(counter, by);
    return this.c.write('events.increment', () =>
      Number(
        this.c.get(
          `INSERT INTO counters (name, value) VALUES (?, ?)
            ON CONFLICT (name) DO UPDATE SET value = counters.value + excluded.value RETURNING value`,
          counter,
          by,
        )?.value,
      ),
    );
  }

  async counter(counter: string): Promise<number> {
    return this.c.run('events.counter', () =>
      Number(this.c.get('SELECT value FROM counters WHERE name = ?', counter)?.value ?? 0),
    );
  }
}

class SqliteProcessed implements ProcessedIds {
  constructor(private readonly c: SqliteConnection) {}

  async markProcessed(scope: string, id: string, at: number): Promise<boolean> {
    checkNumber(at, 'at', `processed id "${scope}/${id}"`);
    return this.c.write(
      'processed.markProcessed',
      () =>
        this.c.change(
          'INSERT INTO processed (scope, id, at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING',
          scope,
          id,
          at,
        ) > 0,
    );
  }

  async isProcessed(scope: string, id: string): Promise<boolean> {
    return this.c.run(
      'processed.isProcessed',
      () =>
        this.c.get('SELECT 1 AS found FROM processed WHERE scope = ? AND id = ?', scope, id) !== undefined,
    );
  }
}

/**
 * Channel history: appends are one insert; every `perChannel` appends to a channel (and on the
 * first append after opening) the lines older than the newest `perChannel` are deleted in one go.
 */
class SqliteHistory implements HistoryStore {
  /** Appends per channel since its last trim (in this process). */
  private readonly sinceTrim = new Map<string, number>();

  constructor(
    private readonly c: SqliteConnection,
    private readonly perChannel: number,
  ) {}

  async append(entry: HistoryEntry): Promise<void> {
    const place = `history line "${entry.channelId}/${entry.messageId}"`;
    encodeJson(entry, place);
    const author = encodeJson(entry.author, place);
    return this.c.write('history.append', () => {
      this.c.change(
        'INSERT INTO history (channel_id, message_id, at, author, text) VALUES (?, ?, ?, ?, ?)',
        entry.channelId,
        entry.messageId,
        entry.at,
        author,
        entry.text,
      );
      const count = this.sinceTrim.get(entry.channelId);
      if (count === undefined || count + 1 >= this.perChannel) {
        this.c.change(
          `DELETE FROM history WHERE channel_id = ? AND seq <= (
            SELECT seq FROM history WHERE channel_id = ? ORDER BY seq DESC LIMIT 1 OFFSET ?)`,
          entry.channelId,
          entry.channelId,
          this.perChannel,
        );
        this.sinceTrim.set(entry.channelId, 0);
      } else {
        this.sinceTrim.set(entry.channelId, count + 1);
      }
    });
  }

  async recent(channelId: string, limit: number): Promise<HistoryEntry[]> {
    return this.c.run('history.recent', () => {
      const take = Math.min(limitOf(limit) < 0 ? this.perChannel : limitOf(limit), this.perChannel);
      if (take === 0) return [];
      return this.c
        .all(
          'SELECT seq, message_id, at, author, text FROM history WHERE channel_id = ? ORDER BY seq DESC LIMIT ?',
          channelId,
          take,
        )
        .reverse()
        .map((row) => ({
          channelId,
          messageId: String(row.message_id),
          at: Number(row.at),
          author: decodeJson<HistoryEntry['author']>(
            row.author,
            `history line "${channelId}/${String(row.message_id)}"`,
          ),
          text: String(row.text),
        }));
    });
  }
}
