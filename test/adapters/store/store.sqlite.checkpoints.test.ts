/**
 * Who checkpoints the SQLite store's write-ahead log: a worker thread once the store has written a
 * while (so the thread that writes never stops to copy the log and sync the disk), the writing
 * connection when told to, and again when the worker fails. The waits here are for the worker
 * thread's own answers, never for time.
 */
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../../../src/adapters/store/sqlite/sqliteStore.js';
import { createLogger } from '../../../src/logging/logger.js';

interface Line {
  level: number;
  msg: string;
  frames?: number;
  copied?: number;
  mode?: 'restart' | 'passive';
  restarted?: boolean;
}

/** A debug logger whose lines can be awaited by message. */
function watchedLogger() {
  const lines: Line[] = [];
  const waiting: { msg: string; found: (line: Line) => void }[] = [];
  const logger = createLogger({
    level: 'debug',
    destination: new Writable({
      write(chunk, _encoding, done) {
        for (const text of String(chunk).split('\n')) {
          if (!text.trim()) continue;
          const line = JSON.parse(text) as Line;
          lines.push(line);
          for (const w of waiting.filter((x) => x.msg === line.msg)) {
            waiting.splice(waiting.indexOf(w), 1);
            w.found(line);
          }
        }
        done();
      },
    }),
  });
  const logged = (msg: string): Promise<Line> =>
    new Promise((found) => {
      const already = lines.find((l) => l.msg === msg);
      if (already) found(already);
      else waiting.push({ msg, found });
    });
  return { logger, lines, logged };
}

const dirs: string[] = [];
function nextDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'troupe-ckpt-'));
  dirs.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A store whose worker checkpoints after every commit and starts the log over past `restartPages`. */
async function storeThatRestarts(restartPages: number) {
  const path = join(nextDir(), 'troupe.db');
  const { logger, lines } = watchedLogger();
  const store = await openSqliteStore({
    path,
    logger,
    checkpoints: { by: 'worker', afterCommits: 1, delayMs: 0, restartPages },
  });
  return { path, store, lines };
}

describe('sqlite store: checkpoints of the write-ahead log', () => {
  it('move to a worker thread once the store has committed enough, which copies the log into the database', async () => {
    const path = join(nextDir(), 'troupe.db');
    const { logger, lines, logged } = watchedLogger();
    const store = await openSqliteStore({
      path,
      logger,
      checkpoints: { by: 'worker', afterCommits: 3, delayMs: 0 },
    });
    for (let i = 0; i < 2; i++) await store.documents.put('c', `k${i}`, { i });
    expect(lines.map((l) => l.msg)).not.toContain('write-ahead log checkpoints moved to a worker thread');
    for (let i = 2; i < 6; i++) await store.documents.put('c', `k${i}`, { i });
    await logged('write-ahead log checkpoints moved to a worker thread');
    const done = await logged('write-ahead log checkpointed');
    expect(done.frames).toBeGreaterThan(0);
    expect(done.copied).toBeGreaterThan(0);
    expect(done.copied).toBeLessThanOrEqual(done.frames as number);
    // The pages are in the database file itself: another connection reads them with no log at all.
    await store.close();
    expect(existsSync(`${path}-wal`)).toBe(false);
    const raw = new Database(path, { readonly: true });
    expect(raw.prepare("SELECT COUNT(*) AS n FROM documents WHERE collection = 'c'").get()).toEqual({ n: 6 });
    raw.close();
  });

  it('start the log over once it is long, so a store written all the time keeps a bounded log', async () => {
    const { path, store, lines } = await storeThatRestarts(64);
    const value = { text: 'x'.repeat(3_000) };
    const startedOver = () => lines.some((l) => l.msg === 'write-ahead log checkpointed; it starts over');
    // Written without a pause: a passive checkpoint alone always finds newer commits than it
    // copied, and the log would only grow.
    let written = 0;
    while (!startedOver() && written < 5_000) await store.documents.put('c', `k${written++}`, value);
    expect(startedOver()).toBe(true);
    const before = statSync(`${path}-wal`).size;
    expect(before).toBeGreaterThanOrEqual(64 * 4_096);
    // The next commits write the log from its start: the file does not grow.
    for (let i = 0; i < 10; i++) await store.documents.put('after', `k${i}`, value);
    expect(statSync(`${path}-wal`).size).toBe(before);
    expect((await store.documents.list('after')).length).toBe(10);
    await store.close();
    const raw = new Database(path, { readonly: true });
    expect(raw.prepare("SELECT COUNT(*) AS n FROM documents WHERE collection = 'c'").get()).toEqual({
      n: written,
    });
    raw.close();
  });

  it('hold writes back for a restart only after a passive checkpoint, asked at once, caught up with the long log', async () => {
    const { store, lines } = await storeThatRestarts(64);
    const value = { text: 'x'.repeat(3_000) };
    const restarted = (l: Line) => l.msg === 'write-ahead log checkpointed; it starts over';
    let written = 0;
    while (lines.filter(restarted).length < 2 && written < 10_000)
      await store.documents.put('c', `k${written++}`, value);
    await store.close();
    const checkpoints = lines.filter((l) => l.mode !== undefined);
    const restarts = checkpoints.flatMap((l, i) => (restarted(l) ? [i] : []));
    expect(restarts.length).toBeGreaterThanOrEqual(2);
    // Before each restart: the passive checkpoint that found the log past 64 pages, then the one
    // that caught up with it while writes went on (the hold then copies only what came after).
    for (const at of restarts) {
      const before = checkpoints.slice(0, at).reverse();
      const passivesPast = before.findIndex((l) => l.mode !== 'passive' || (l.frames ?? 0) < 64);
      expect(passivesPast === -1 ? before.length : passivesPast).toBeGreaterThanOrEqual(2);
    }
  });

  it('hold writes back while the log starts over, then store every one, in order, closing included', async () => {
    const { path, store, lines } = await storeThatRestarts(32);
    const pad = 'x'.repeat(3_000);
    const writes: Promise<number>[] = [];
    const put = () => {
      const i = writes.length + 1;
      writes.push(store.documents.put('c', 'counter', { i, pad }, { expectedVersion: i - 1 }));
      return writes[i - 1] as Promise<number>;
    };
    const restarts = () =>
      lines.filter((l) => l.msg === 'write-ahead log checkpointed; it starts over').length;
    // Writes of one key, most not awaited: each must find the version the one before it wrote.
    while (restarts() < 2 && writes.length < 20_000) {
      for (let k = 0; k < 4; k++) void put();
      await put();
    }
    // The last ones are still queued or in an open group when the store closes.
    for (let k = 0; k < 20; k++) void put();
    await store.close();
    expect(await Promise.all(writes)).toEqual(writes.map((_, i) => i + 1));
    expect(
      lines.filter((l) => l.msg === 'write-ahead log checkpointed; it starts over').length,
    ).toBeGreaterThan(0);
    const raw = new Database(path, { readonly: true });
    const row = raw
      .prepare("SELECT value, version FROM documents WHERE collection = 'c' AND key = 'counter'")
      .get() as {
      value: string;
      version: number;
    };
    raw.close();
    expect(row.version).toBe(writes.length);
    expect(JSON.parse(row.value).i).toBe(writes.length);
  });

  it('store every write made before close(), when close() comes while the writer holds back for a restart', async () => {
    // Whether close() lands in a hold depends on the worker's pace: several rounds, each closing
    // in the middle of writes made flat out (the build before lost some in about 1 round of 4).
    for (let round = 0; round < 6; round++) {
      const { path, store } = await storeThatRestarts(64);
      const value = { text: 'x'.repeat(200) };
      const writes: Promise<unknown>[] = [];
      for (let i = 0; i < 40_000; i++) {
        writes.push(store.documents.put('c', `k${i}`, value));
        if (i % 50 === 49) await new Promise((resolve) => setImmediate(resolve));
      }
      await store.close();
      const settled = await Promise.allSettled(writes);
      expect(settled.filter((r) => r.status === 'rejected')).toEqual([]);
      const raw = new Database(path, { readonly: true });
      expect(raw.prepare("SELECT COUNT(*) AS n FROM documents WHERE collection = 'c'").get()).toEqual({
        n: writes.length,
      });
      raw.close();
    }
  });

  it('give up a restart that a reader in another connection holds up, and stay passive for a while (1 s, then longer)', async () => {
    const { path, store, lines } = await storeThatRestarts(64);
    await store.documents.put('c', 'seed', 1);
    // A read left open (a backup, a shell): the log cannot start over while it reads it.
    const reader = new Database(path);
    reader.exec('BEGIN');
    reader.prepare('SELECT COUNT(*) FROM documents').get();
    const value = { text: 'x'.repeat(3_000) };
    const restarts = () => lines.filter((l) => l.mode === 'restart');
    let written = 0;
    while (restarts().length === 0 && written < 5_000) await store.documents.put('c', `k${written++}`, value);
    expect(restarts()).toHaveLength(1);
    expect(restarts()[0]?.restarted).toBe(false);
    const tried = lines.length;
    // Each try holds the writers up a little: the next checkpoint is passive again.
    const next = () => lines.slice(tried).find((l) => l.mode !== undefined);
    let after = 0;
    while (next() === undefined && after < 5_000) await store.documents.put('after', `k${after++}`, value);
    expect(next()?.mode).toBe('passive');
    reader.exec('COMMIT');
    reader.close();
    expect((await store.documents.list('after')).length).toBe(after);
    await store.close();
  });

  it('stay with the writing connection when told to (no worker starts)', async () => {
    const path = join(nextDir(), 'troupe.db');
    const { logger, lines } = watchedLogger();
    const store = await openSqliteStore({
      path,
      logger,
      checkpoints: { by: 'writer', afterCommits: 1, delayMs: 0 },
    });
    for (let i = 0; i < 10; i++) await store.documents.put('c', `k${i}`, { i });
    await store.close();
    expect(lines.map((l) => l.msg)).not.toContain('write-ahead log checkpoints moved to a worker thread');
    expect(existsSync(`${path}-wal`)).toBe(false);
  });

  it('go back to the writer, with a warning, when the worker fails; writing goes on', async () => {
    const dir = nextDir();
    const path = join(dir, 'troupe.db');
    const { logger, logged } = watchedLogger();
    const store = await openSqliteStore({
      path,
      logger,
      checkpoints: { by: 'worker', afterCommits: 2, delayMs: 0 },
    });
    await store.documents.put('c', 'before', 1);
    // The data directory is removed under the running store: its open file lives on, but the
    // worker cannot open the database.
    rmSync(dir, { recursive: true, force: true });
    await store.documents.put('c', 'starts-the-worker', 2);
    const warning = await logged(
      'the checkpoint worker failed; the writer checkpoints the write-ahead log itself again',
    );
    expect(warning.level).toBe(40);
    await store.documents.put('c', 'after', 3);
    expect((await store.documents.get('c', 'after'))?.value).toBe(3);
    await store.close();
  });
});
