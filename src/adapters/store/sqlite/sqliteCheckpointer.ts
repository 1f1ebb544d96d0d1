import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { Logger } from '../../../logging/logger.js';

/**
 * The worker's code, CommonJS run with `eval` (no file to find, whether Troupe runs from its
 * build or its sources). It opens its own connection and runs a passive checkpoint each time it is
 * asked: that copies committed pages from the write-ahead log into the database and syncs the
 * disk, without taking the write lock, so the thread that writes never waits for it.
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
  try {
    const [result] = db.pragma('wal_checkpoint(PASSIVE)');
    parentPort.postMessage({ frames: result.log, copied: result.checkpointed });
  } catch (error) {
    parentPort.postMessage({ error: String((error && error.message) || error) });
  }
});
`;

/** What the worker answers to a checkpoint. */
type CheckpointReply = { frames: number; copied: number } | { error: string };

/** How a {@link SqliteCheckpointer} runs. */
export interface SqliteCheckpointerOptions {
  path: string;
  busyTimeoutMs: number;
  logger: Logger | undefined;
  /** Commits before the worker starts (a store that writes little never starts one). Default 256. */
  afterCommits?: number;
  /** How long after a commit a checkpoint is asked for; at most one is in flight. Default 100 ms. */
  delayMs?: number;
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
    realSetTimeout(() => this.worker?.postMessage('checkpoint'), this.options.delayMs ?? 100).unref();
  }

  /** Stops the worker after the checkpoint it is running, closing its connection. */
  async stop(): Promise<void> {
    this.stopped = true;
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
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { path, busyTimeoutMs, driver } });
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
    if ('error' in reply) {
      this.options.logger?.debug({ path: this.options.path, reason: reply.error }, 'checkpoint skipped');
      return;
    }
    this.options.logger?.debug(
      { path: this.options.path, frames: reply.frames, copied: reply.copied },
      'write-ahead log checkpointed',
    );
  }

  private failed(error: Error): void {
    if (this.stopped) return;
    this.stopped = true;
    this.options.onRunning(false);
    this.options.logger?.warn(
      { path: this.options.path, err: error },
      'the checkpoint worker failed; the writer checkpoints the write-ahead log itself again',
    );
  }
}
