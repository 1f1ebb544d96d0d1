import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { TroupeError } from '../../../ports/troupeError.js';
import { SqliteCheckpointer } from './sqliteCheckpointer.js';
import {
  capacityError,
  capitalise,
  driverError,
  isLockHeld,
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

/** The real `setTimeout`, taken when this module loads: fake timers installed later cannot stop lock retries. */
const realSetTimeout = globalThis.setTimeout;

/**
 * How long to wait before each new try for the write lock another process holds (ms), the last
 * repeated: short at first (a group commits within a tick), as SQLite's own busy handler does.
 */
const LOCK_RETRY_MS = [1, 2, 5, 10, 15, 20, 25];

/** A write or read that waits for the lock, in the order it was asked for. */
interface Queued {
  operation: string;
  work: () => unknown;
  kind: 'write' | 'unwaited' | 'read';
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * The write lock is held by another connection: what waits for it, since when. Or (`restart`)
 * the writer holds back while the checkpoint worker starts the log over.
 */
interface LockWait {
  since: number;
  tries: number;
  queue: Queued[];
  timer: ReturnType<typeof setTimeout> | undefined;
  restart?: true;
}

/**
 * Longest the writer holds back for a restart of the log (ms), should the worker not answer:
 * a restart copies what came in since the last checkpoint, and waits 100 ms at most for locks.
 */
const RESTART_HOLD_LIMIT_MS = 2_000;

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
  /** Set while another connection holds the write lock: writes (and reads after them) queue here. */
  private lockWait: LockWait | undefined;

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
      this.db.pragma(`journal_size_limit = ${WAL_KEPT_BYTES}`);
      // Each checkpoint syncs the disk twice: every 10,000 pages (about 40 MB) rather than 1,000.
      this.db.pragma(`wal_autocheckpoint = ${WRITER_CHECKPOINT_PAGES}`);
      this.schemaVersion = migrate(this.db, path, options.logger);
      if (options.maxSizeBytes !== undefined) limitSize(this.db, options.maxSizeBytes);
      // From now on a write never waits for another process's lock inside SQLite, which would stop
      // the event loop for as long: it is queued and the lock tried again on a timer (see write).
      this.db.pragma('busy_timeout = 0');
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
        ...(options.checkpoints?.restartPages !== undefined
          ? { restartPages: options.checkpoints.restartPages }
          : {}),
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
  private run<T>(operation: string, work: () => T): T {
    this.checkOpen(operation);
    if (groupOwner !== undefined && groupOwner !== this) groupOwner.commitNow();
    try {
      return work();
    } catch (error) {
      throw this.failure(error, operation);
    }
  }

  /**
   * Runs a read against the database: at once, unless writes wait for another process's lock
   * (see {@link SqliteConnection.write}); then after them, so it sees them.
   */
  read<T>(operation: string, work: () => T): Promise<T> {
    if (this.lockWait) return this.enqueue<T>(operation, work, 'read');
    try {
      return Promise.resolve(this.run(operation, work));
    } catch (error) {
      return Promise.reject(error);
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
   * While another process holds the write lock, writes are queued in order (reads after them
   * too) and the lock is tried again on a timer, so the event loop never waits for it; past the
   * busy timeout every queued write fails with `TROUPE_STORE_BUSY`.
   *
   * `work` runs in the group's transaction itself, not in a savepoint of it (a savepoint copies
   * every page a write first touches, which cost more than the writes). So `work` must refuse
   * before it changes anything: a `TroupeError` it throws (a lost compare-and-set, checked first)
   * fails that write alone. Any other error (a full disk, an I/O error) may have left part of it
   * written: the whole group is rolled back and each of its writes fails with that error.
   */
  write<T>(operation: string, work: () => T): Promise<T> {
    let joined: { group: WriteGroup; value: T } | undefined;
    try {
      joined = this.joinGroup(operation, work);
    } catch (error) {
      return Promise.reject(error);
    }
    if (!joined) return this.enqueue<T>(operation, work, 'write');
    const { group, value } = joined;
    return new Promise<T>((resolve, reject) => {
      group.waiting.push({ resolve: () => resolve(value), reject, operation });
    });
  }

  /**
   * As {@link SqliteConnection.write}, for a write nobody waits for (a history line): it joins
   * this tick's group and returns, sparing a promise per write. It is stored when the group
   * commits; a group that cannot commit (or a lock that stays held) logs the writes it lost.
   * @throws TroupeError as `write` rejects: the store is closed, or `work` failed (see `write`).
   */
  writeNow(operation: string, work: () => void): void {
    const joined = this.joinGroup(operation, work);
    if (joined) joined.group.unwaited.push(operation);
    else void this.enqueue(operation, work, 'unwaited');
  }

  /**
   * Runs `work` in this tick's group, opening it if need be (see {@link SqliteConnection.write}
   * for what a failure of `work` does to the group); undefined, without running it, when another
   * connection holds the write lock (the write is to be queued).
   * @throws TroupeError the store is closed, or `work` failed.
   */
  private joinGroup<T>(operation: string, work: () => T): { group: WriteGroup; value: T } | undefined {
    let group: WriteGroup | undefined;
    try {
      this.checkOpen(operation);
      if (this.lockWait) return undefined;
      group = this.group ?? this.openGroup();
    } catch (error) {
      throw this.failure(error, operation);
    }
    if (!group) return undefined;
    try {
      const value = work();
      return { group, value };
    } catch (error) {
      const failure = this.failure(error, operation);
      if (!TroupeError.isInstance(error) || !this.db.inTransaction) this.abandonGroup(group, failure);
      throw failure;
    }
  }

  /** A write or read queued behind the lock another connection holds. */
  private enqueue<T>(operation: string, work: () => unknown, kind: Queued['kind']): Promise<T> {
    const wait = this.lockWait as LockWait;
    return new Promise<T>((resolve, reject) => {
      wait.queue.push({ operation, work, kind, resolve: resolve as (value: unknown) => void, reject });
    });
  }

  /** Starts waiting for the write lock: queued work runs once a later try takes it. */
  private waitForLock(): void {
    const wait: LockWait = { since: Date.now(), tries: 0, queue: [], timer: undefined };
    this.lockWait = wait;
    this.scheduleLockTry(wait);
  }

  private scheduleLockTry(wait: LockWait): void {
    const delay = LOCK_RETRY_MS[Math.min(wait.tries, LOCK_RETRY_MS.length - 1)] as number;
    wait.timer = realSetTimeout(() => this.tryLockAgain(wait), delay);
  }

  /** Tries the lock again: takes it and runs what waited, fails it all past the busy timeout, or waits on. */
  private tryLockAgain(wait: LockWait): void {
    if (this.lockWait !== wait) return;
    wait.tries += 1;
    let held: unknown;
    try {
      this.checkOpen('write');
      held = this.tryBegin();
    } catch (error) {
      this.endLockWait(wait, this.failure(error, queuedOperations(wait)));
      return;
    }
    if (held === undefined) {
      this.lockWait = undefined;
      this.startGroup();
      this.runQueued(wait.queue);
    } else if (Date.now() - wait.since >= this.errors.busyTimeoutMs) {
      this.endLockWait(wait, this.failure(held, queuedOperations(wait)));
    } else this.scheduleLockTry(wait);
  }

  /** Runs what waited for the lock, in order (a write may find the lock held again: it queues anew). */
  private runQueued(queue: readonly Queued[]): void {
    for (const item of queue) {
      if (item.kind === 'read') this.read(item.operation, item.work).then(item.resolve, item.reject);
      else if (item.kind === 'write') this.write(item.operation, item.work).then(item.resolve, item.reject);
      else
        try {
          this.writeNow(item.operation, item.work as () => void);
        } catch (error) {
          this.logLost(
            [item.operation],
            TroupeError.isInstance(error) ? error : this.failure(error, item.operation),
          );
        }
    }
  }

  /** Gives up waiting for the lock: queued writes fail with `failure`, queued reads run (they need no lock). */
  private endLockWait(wait: LockWait, failure: TroupeError): void {
    clearTimeout(wait.timer);
    if (this.lockWait === wait) this.lockWait = undefined;
    this.logLost(
      wait.queue.filter((q) => q.kind === 'unwaited').map((q) => q.operation),
      failure,
    );
    for (const item of wait.queue) {
      if (item.kind === 'write') item.reject(failure);
      else if (item.kind === 'read') this.read(item.operation, item.work).then(item.resolve, item.reject);
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

  /** Opens a group; undefined when another connection holds the write lock (waiting for it starts). */
  private openGroup(): WriteGroup | undefined {
    if (this.tryBegin() === undefined) return this.startGroup();
    this.waitForLock();
    return undefined;
  }

  /** BEGIN IMMEDIATE: undefined once begun, or the driver's error when another connection holds the lock. */
  private tryBegin(): unknown {
    // Another connection of this process holding a group would keep the lock while this one waits
    // for it on the same thread: commit it first.
    if (groupOwner !== undefined && groupOwner !== this) groupOwner.commitNow();
    try {
      this.statement('BEGIN IMMEDIATE').run();
      return undefined;
    } catch (error) {
      if (isLockHeld(error)) return error;
      throw error;
    }
  }

  /** The group of the transaction just begun; it commits in the next `setImmediate` turn. */
  private startGroup(): WriteGroup {
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
    this.logLost(group.unwaited, failure);
    for (const w of group.waiting) w.reject(failure);
  }

  /** Logs writes nobody waited for that were not stored (their callers cannot hear of it). */
  private logLost(operations: readonly string[], failure: TroupeError): void {
    if (operations.length === 0) return;
    this.options.logger?.warn(
      { operations: [...new Set(operations)], count: operations.length, code: failure.code },
      `${operations.length} write(s) were not stored: ${failure.message}`,
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
      this.logLost(group.unwaited, failure);
      for (const w of group.waiting) w.reject(failure);
      return;
    }
    if (this.checkpointer?.wantsRestart()) this.holdForRestart(this.checkpointer);
    else this.checkpointer?.committed();
    for (const w of group.waiting) w.resolve();
  }

  /**
   * Stops opening write groups while the checkpoint worker starts the log over: writes (and reads
   * after them) queue as for another connection's lock, and go on once it has answered. Nothing
   * is committed meanwhile, so it finds the log whole, and the next commit writes it from its start.
   */
  private holdForRestart(checkpointer: SqliteCheckpointer): void {
    if (this.lockWait) return;
    const wait: LockWait = { since: Date.now(), tries: 0, queue: [], timer: undefined, restart: true };
    this.lockWait = wait;
    const resume = () => this.endRestartHold(wait);
    wait.timer = realSetTimeout(resume, RESTART_HOLD_LIMIT_MS);
    void checkpointer.restartNow().then(resume);
  }

  /** Goes on writing after a restart: what queued meanwhile runs, as after a lock wait. */
  private endRestartHold(wait: LockWait): void {
    if (this.lockWait !== wait) return;
    clearTimeout(wait.timer);
    this.lockWait = undefined;
    if (this.closed || wait.queue.length === 0) return;
    // Another process may hold the lock by now: then this is an ordinary lock wait.
    const next: LockWait = { since: Date.now(), tries: 0, queue: wait.queue, timer: undefined };
    this.lockWait = next;
    this.tryLockAgain(next);
  }

  private checkOpen(operation: string): void {
    if (this.closed) throw this.closedError(operation);
  }

  private closedError(operation: string): TroupeError {
    return new TroupeError(
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
    // Writes held back for a restart are written now, with the open group.
    if (this.lockWait?.restart) this.endRestartHold(this.lockWait);
    // Those that then met the lock of the restart still running, one more try: the store closes
    // the checkpoint worker first, so it is free unless another process holds it.
    if (this.lockWait) this.tryLockAgain(this.lockWait);
    if (this.group) this.settleGroup(this.group);
    this.closed = true;
    if (this.lockWait) this.endLockWait(this.lockWait, this.closedError(queuedOperations(this.lockWait)));
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

/** The operations waiting for the lock, for an error message (`documents.put, outbox.record`). */
function queuedOperations(wait: LockWait): string {
  return [...new Set(wait.queue.map((q) => q.operation))].join(', ') || 'write';
}

/** When the writing connection checkpoints the log itself: every 10,000 pages (about 40 MB). */
const WRITER_CHECKPOINT_PAGES = 10_000;

/** When it still does, should the checkpoint worker fall behind: past 100,000 pages (about 400 MB). */
const BACKSTOP_CHECKPOINT_PAGES = 100_000;

/**
 * What the write-ahead log may keep on disk once it starts over: a burst can grow it to hundreds
 * of megabytes, and SQLite reuses the file as it is unless told to cut it back (64 MiB).
 */
const WAL_KEPT_BYTES = 64 * 1024 * 1024;

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
