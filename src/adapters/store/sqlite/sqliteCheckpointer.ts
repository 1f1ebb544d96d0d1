import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { Logger } from '../../../logging/logger.js';

/**
 * The worker's code, CommonJS run with `eval` (no file to find, whether Troupe runs from its
 * build or its sources). It opens its own connection and runs a checkpoint each time it is asked.
 * A passive one copies committed pages from the write-ahead log into the database and syncs the
 * disk without taking the write lock, so the thread that writes never waits for it. A restart
 * (asked while the writer holds back, right after a passive one caught up with the log) copies
 * what was committed since and takes the lock to start the log over, so that the next commit
 * writes it from its start instead of making the file longer.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.path, { timeout: workerData.busyTimeoutMs });
db.pragma('wal_autocheckpoint = 0');
parentPort.on('message', (message) => {
  if (message === 'stop') {
    try { db.close(); } catch {}
    parentPort.close();
    return;
  }
  const restart = message === 'restart';
  try {
    // A restart follows a passive checkpoint that caught up with the log (asked for just before),
    // so it holds the lock only to copy what was committed since; it waits only briefly for the
    // lock and for readers (writers queue while it holds the lock), and past that copies what it
    // can as a passive one would.
    if (restart) db.pragma('busy_timeout = ' + workerData.restartWaitMs);
    const [result] = db.pragma(restart ? 'wal_checkpoint(RESTART)' : 'wal_checkpoint(PASSIVE)');
    parentPort.postMessage({ frames: result.log, copied: result.checkpointed, restarted: restart && result.busy === 0 });
  } catch (error) {
    parentPort.postMessage({ error: String((error && error.message) || error) });
  } finally {
    if (restart) db.pragma('busy_timeout = ' + workerData.busyTimeoutMs);
  }
});
`;

/** What the worker answers to a checkpoint. */
type CheckpointReply = { frames: number; copied: number; restarted: boolean } | { error: string };

/**
 * Log pages past which the next checkpoint is a restart: 16,384 (64 MiB, what the log keeps on
 * disk once it starts over). Passive checkpoints alone never let a log that is written all the
 * time start over (each finds newer commits than it copied), so under steady load it grew by
 * every page written, hundreds of megabytes, each page appended to the file, and a crash left all
 * of it to read back on the next open.
 */
const DEFAULT_RESTART_PAGES = 16_384;

/**
 * How long a restart waits for the write lock and for readers of the log (ms): writers queue
 * for at most about this long, however busy the file is.
 */
const RESTART_WAIT_MS = 100;

/**
 * After a restart that could not finish, how long checkpoints stay passive (ms): 1 s after the
 * first, doubled after each next one up to 32 s, and back to 1 s once one finishes. Each try
 * holds the writers up to {@link RESTART_WAIT_MS}: a read left open in another process (a backup)
 * costs them that once every 32 s at most.
 */
const RESTART_BACKOFF_MS = { first: 1_000, most: 32_000 };

/** How a {@link SqliteCheckpointer} runs. */
export interface SqliteCheckpointerOptions {
  path: string;
  busyTimeoutMs: number;
  logger: Logger | undefined;
  /** Commits before the worker starts (a store that writes little never starts one). Default 256. */
  afterCommits?: number;
  /** How long after a commit a checkpoint is asked for; at most one is in flight. Default 100 ms. */
  delayMs?: number;
  /** Log pages past which the next checkpoint also starts the log over. Default 16,384 (64 MiB). */
  restartPages?: number;
  /** Called once the worker runs (the writer then leaves checkpoints to it) or has failed (it takes them back). */
  onRunning: (running: boolean) => void;
}

/** The real `setTimeout`, taken when this module loads: fake timers installed later cannot stop checkpoints. */
const realSetTimeout = globalThis.setTimeout;

/**
 * Checkpoints a SQLite file's write-ahead log on a worker thread. A checkpoint copies up to
 * thousands of pages into the database and syncs the disk twice: done by the writing connection,
 * it stopped the event loop for all of that, every few thousand pages. The worker starts after the
 * store has committed {@link SqliteCheckpointerOptions.afterCommits} times; from then on, a commit
 * asks for a checkpoint a little later, at most one at a time. A worker that fails hands
 * checkpoints back to the writer (see `onRunning`), and the failure is logged.
 */
export class SqliteCheckpointer {
  private worker: Worker | undefined;
  private commits = 0;
  private asked = false;
  /** The log's length in pages, as the last checkpoint found it (0 once it started over). */
  private frames = 0;
  /** No restart is tried before this time (`Date.now()`), after one that could not finish. */
  private restartAfter = 0;
  /** The wait after the next restart that cannot finish (see {@link RESTART_BACKOFF_MS}). */
  private backoffMs = RESTART_BACKOFF_MS.first;
  /** Whether the checkpoint in flight is a restart. */
  private restarting = false;
  /** Whether the checkpoint in flight is the passive one a restart waits for (see {@link committed}). */
  private catchingUp = false;
  /** A passive checkpoint caught up with the log past `restartPages`: the next commit holds back for a restart. */
  private caughtUp = false;
  /** Told when the restart in flight has answered (or the worker stopped or failed). */
  private restartWaiters: (() => void)[] = [];
  private stopped = false;
  private exited: Promise<void> | undefined;

  constructor(private readonly options: SqliteCheckpointerOptions) {}

  /** Notes a commit: starts the worker, or asks it for a checkpoint soon. */
  committed(): void {
    if (this.stopped) return;
    if (!this.worker) {
      this.commits += 1;
      if (this.commits >= (this.options.afterCommits ?? 256)) this.start();
      return;
    }
    if (this.asked) return;
    this.asked = true;
    // Past `restartPages`, a passive checkpoint at once, with no hold: the restart that follows
    // then holds the writer only to copy what was committed during it, not the whole interval's.
    this.catchingUp = this.restartDue();
    const delayMs = this.catchingUp ? 0 : (this.options.delayMs ?? 100);
    realSetTimeout(() => this.worker?.postMessage('checkpoint'), delayMs).unref();
  }

  /** The log has grown past `restartPages`, and no restart failed lately. */
  private restartDue(): boolean {
    return (
      this.frames >= (this.options.restartPages ?? DEFAULT_RESTART_PAGES) && Date.now() >= this.restartAfter
    );
  }

  /**
   * True when the log has grown past `restartPages` (and no restart failed lately), a passive
   * checkpoint has caught up with it since, and no checkpoint is asked for: the writer then stops
   * committing and calls {@link restartNow}.
   */
  wantsRestart(): boolean {
    return this.worker !== undefined && !this.stopped && !this.asked && this.caughtUp && this.restartDue();
  }

  /**
   * Asks at once for a restart: resolves once it has answered, whether the log starts over or
   * not (or the worker stopped or failed). The writer commits nothing meanwhile, so the restart
   * finds the log whole and the writer's next commit writes it from its start.
   */
  restartNow(): Promise<void> {
    return new Promise((resolve) => {
      this.restartWaiters.push(resolve);
      if (this.asked || !this.worker || this.stopped) return this.releaseRestartWaiters();
      this.asked = true;
      this.restarting = true;
      this.worker.postMessage('restart');
    });
  }

  private releaseRestartWaiters(): void {
    const waiters = this.restartWaiters;
    this.restartWaiters = [];
    for (const resolve of waiters) resolve();
  }

  /** Stops the worker after the checkpoint it is running, closing its connection. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.releaseRestartWaiters();
    const worker = this.worker;
    if (!worker) return;
    // Held open while it closes: an unreferenced worker would let the process end mid-wait.
    worker.ref();
    worker.postMessage('stop');
    await this.exited;
  }

  private start(): void {
    const { path, busyTimeoutMs, logger } = this.options;
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { path, busyTimeoutMs, driver, restartWaitMs: RESTART_WAIT_MS },
    });
    worker.unref();
    this.worker = worker;
    this.exited = new Promise((resolve) => worker.once('exit', () => resolve()));
    worker.on('message', (reply: CheckpointReply) => this.answered(reply));
    worker.once('online', () => this.options.onRunning(true));
    worker.once('error', (error) => this.failed(error));
    logger?.debug({ path }, 'write-ahead log checkpoints moved to a worker thread');
  }

  private answered(reply: CheckpointReply): void {
    this.asked = false;
    const mode = this.restarting ? 'restart' : 'passive';
    if (this.restarting) this.noteRestart('error' in reply ? false : reply.restarted);
    this.caughtUp = !this.restarting && this.catchingUp && !('error' in reply);
    this.restarting = false;
    this.catchingUp = false;
    this.releaseRestartWaiters();
    if ('error' in reply) {
      this.options.logger?.debug(
        { path: this.options.path, mode, reason: reply.error },
        'checkpoint skipped',
      );
      return;
    }
    this.frames = reply.restarted ? 0 : reply.frames;
    this.options.logger?.debug(
      {
        path: this.options.path,
        mode,
        frames: reply.frames,
        copied: reply.copied,
        restarted: reply.restarted,
      },
      reply.restarted ? 'write-ahead log checkpointed; it starts over' : 'write-ahead log checkpointed',
    );
  }

  /** Backs off after a restart that could not finish; starts again from the shortest wait after one that did. */
  private noteRestart(finished: boolean): void {
    if (finished) {
      this.backoffMs = RESTART_BACKOFF_MS.first;
      return;
    }
    this.restartAfter = Date.now() + this.backoffMs;
    this.backoffMs = Math.min(this.backoffMs * 2, RESTART_BACKOFF_MS.most);
  }

  private failed(error: Error): void {
    if (this.stopped) return;
    this.stopped = true;
    this.releaseRestartWaiters();
    this.options.onRunning(false);
    this.options.logger?.warn(
      { path: this.options.path, err: error },
      'the checkpoint worker failed; the writer checkpoints the write-ahead log itself again',
    );
  }
}
