import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { TroupeError } from '../../../ports/troupeError.js';
import { SqliteCheckpointer } from './sqliteCheckpointer.js';
import {
  capacityError,
  capitalise,
  driverError,
  openError,
  osReason,
  type SqliteErrorContext,
} from './sqliteErrors.js';
import { migrate } from './sqliteSchema.js';
import type { SqliteStoreOptions } from './sqliteStore.js';

export type Row = Record<string, unknown>;

/** Writes made in one tick, waiting for their transaction to commit. */
interface WriteGroup {
  waiting: { resolve: () => void; reject: (error: unknown) => void; operation: string }[];
  /** Operations of writes nobody waits for ({@link SqliteConnection.writeNow}): logged if lost. */
  unwaited: string[];
}

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
export class SqliteConnection {
  readonly now: () => number;
  readonly schemaVersion: number;
  private readonly db: Database.Database;
  private readonly statements = new Map<string, Database.Statement>();
  private readonly where: string;
  private readonly errors: SqliteErrorContext;
  private closed = false;
  /** The writes of this tick, in one open transaction until it commits. */
  private group: WriteGroup | undefined;
  private readonly rollbackListeners: (() => void)[] = [];
  private readonly checkpointer: SqliteCheckpointer | undefined;

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
      this.db.pragma(`wal_autocheckpoint = ${WRITER_CHECKPOINT_PAGES}`);
      this.schemaVersion = migrate(this.db, path, options.logger);
      if (options.maxSizeBytes !== undefined) limitSize(this.db, options.maxSizeBytes);
    } catch (error) {
      this.db.close();
      throw TroupeError.isInstance(error) ? error : openError(error, this.errors);
    }
    if (!inMemory && (options.checkpoints?.by ?? 'worker') === 'worker')
      this.checkpointer = new SqliteCheckpointer({
        path,
        busyTimeoutMs,
        logger: options.logger,
        ...(options.checkpoints?.afterCommits !== undefined
          ? { afterCommits: options.checkpoints.afterCommits }
          : {}),
        ...(options.checkpoints?.delayMs !== undefined ? { delayMs: options.checkpoints.delayMs } : {}),
        onRunning: (running) => this.leaveCheckpoints(running),
      });
    options.logger?.debug({ path, schemaVersion: this.schemaVersion }, 'SQLite store opened');
  }

  /** The writer checkpoints only as a backstop while the worker does (`true`), or again itself. */
  private leaveCheckpoints(toWorker: boolean): void {
    if (this.closed) return;
    const pages = toWorker ? BACKSTOP_CHECKPOINT_PAGES : WRITER_CHECKPOINT_PAGES;
    try {
      this.db.pragma(`wal_autocheckpoint = ${pages}`);
    } catch (error) {
      this.options.logger?.warn({ err: error }, 'could not set when the writer checkpoints');
    }
  }

  /** Stops the checkpoint worker (before closing, so this connection is the last and cleans up the log). */
  async stopCheckpoints(): Promise<void> {
    await this.checkpointer?.stop();
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
   * IMMEDIATE), and the group commits in the next `setImmediate` turn, after everything the tick
   * set off (the continuations of its writes included). The promise resolves only once the group
   * has committed, so a caller that awaits a write knows it is stored; a failed commit fails every
   * write of the group.
   * Reads on this connection see the writes of the open group.
   *
   * `work` runs in the group's transaction itself, not in a savepoint of it (a savepoint copies
   * every page a write first touches, which cost more than the writes). So `work` must refuse
   * before it changes anything: a `TroupeError` it throws (a lost compare-and-set, checked first)
   * fails that write alone. Any other error (a full disk, an I/O error) may have left part of it
   * written: the whole group is rolled back and each of its writes fails with that error.
   */
  write<T>(operation: string, work: () => T): Promise<T> {
    let joined: { group: WriteGroup; value: T };
    try {
      joined = this.joinGroup(operation, work);
    } catch (error) {
      return Promise.reject(error);
    }
    const { group, value } = joined;
    return new Promise<T>((resolve, reject) => {
      group.waiting.push({ resolve: () => resolve(value), reject, operation });
    });
  }

  /**
   * As {@link SqliteConnection.write}, for a write nobody waits for (a history line): it joins
   * this tick's group and returns, sparing a promise per write. It is stored when the group
   * commits; a group that cannot commit logs the writes it lost.
   * @throws TroupeError as `write` rejects: the store is closed, or `work` failed (see `write`).
   */
  writeNow(operation: string, work: () => void): void {
    this.joinGroup(operation, work).group.unwaited.push(operation);
  }

  /**
   * Runs `work` in this tick's group, opening it if need be (see {@link SqliteConnection.write}
   * for what a failure of `work` does to the group).
   * @throws TroupeError the store is closed, or `work` failed.
   */
  private joinGroup<T>(operation: string, work: () => T): { group: WriteGroup; value: T } {
    let group: WriteGroup;
    try {
      this.checkOpen(operation);
      group = this.group ?? this.openGroup();
    } catch (error) {
      throw this.failure(error, operation);
    }
    try {
      const value = work();
      return { group, value };
    } catch (error) {
      const failure = this.failure(error, operation);
      if (!TroupeError.isInstance(error) || !this.db.inTransaction) this.abandonGroup(group, failure);
      throw failure;
    }
  }

  /** Calls `listener` when a group of writes could not be committed (to forget what it kept). */
  onRollback(listener: () => void): void {
    this.rollbackListeners.push(listener);
  }

  /** Commits the open group now (another connection of this process needs the file). */
  commitNow(): void {
    if (this.group) this.settleGroup(this.group);
  }

  private openGroup(): WriteGroup {
    // Another connection of this process holding a group would keep the lock while this one waits
    // for it on the same thread: commit it first.
    if (groupOwner !== undefined && groupOwner !== this) groupOwner.commitNow();
    this.statement('BEGIN IMMEDIATE').run();
    groupOwner = this;
    const group: WriteGroup = { waiting: [], unwaited: [] };
    this.group = group;
    later(() => this.settleGroup(group));
    return group;
  }

  /** Rolls the group back after a write failed midway; each of its writes fails with `failure`. */
  private abandonGroup(group: WriteGroup, failure: TroupeError): void {
    if (this.group !== group) return;
    this.group = undefined;
    if (groupOwner === this) groupOwner = undefined;
    try {
      if (this.db.inTransaction) this.statement('ROLLBACK').run();
    } catch {
      // SQLite rolls back on its own when it cannot go on (a full disk, an I/O error).
    }
    for (const listener of this.rollbackListeners) listener();
    this.lostUnwaited(group, failure);
    for (const w of group.waiting) w.reject(failure);
  }

  /** Logs the writes of a failed group that nobody waited for (their callers cannot hear of it). */
  private lostUnwaited(group: WriteGroup, failure: TroupeError): void {
    if (group.unwaited.length === 0) return;
    this.options.logger?.warn(
      { operations: [...new Set(group.unwaited)], count: group.unwaited.length, code: failure.code },
      `${group.unwaited.length} write(s) were not stored: ${failure.message}`,
    );
  }

  /** Commits the group (its tick is over, or another connection needs the file), then settles its writes. */
  private settleGroup(group: WriteGroup): void {
    if (this.group !== group) return;
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
      this.lostUnwaited(group, failure);
      for (const w of group.waiting) w.reject(failure);
      return;
    }
    this.checkpointer?.committed();
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

  close(): void {
    if (this.closed) return;
    if (this.group) this.settleGroup(this.group);
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

/** When the writing connection checkpoints the log itself: every 10,000 pages (about 40 MB). */
const WRITER_CHECKPOINT_PAGES = 10_000;

/** When it still does, should the checkpoint worker fall behind: past 100,000 pages (about 400 MB). */
const BACKSTOP_CHECKPOINT_PAGES = 100_000;

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
/** A LIMIT for SQL: -1 for none (no limit or an infinite one). */
export function limitOf(limit: number | undefined): number {
  if (limit === undefined || limit === Number.POSITIVE_INFINITY) return -1;
  return Number.isFinite(limit) ? Math.max(0, Math.floor(limit)) : 0;
}

export function conflict(kind: string, place: string, expected: number, actual: number): TroupeError {
  return new TroupeError(
    'TROUPE_STORE_CONFLICT',
    `Compare-and-set lost on ${kind} "${place}": expected version ${expected}, found ${actual === 0 ? 'none (0)' : `version ${actual}`}. Someone else wrote first; nothing was written.`,
    { details: { place, expectedVersion: expected, actualVersion: actual } },
  );
}
