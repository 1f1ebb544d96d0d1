import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import {
  openSqliteStore,
  SQLITE_SCHEMA_VERSION,
  type SqliteStore,
  sqliteMigrations,
} from '../../../src/adapters/store/sqlite/index.js';
import type { TroupeStore } from '../../../src/ports/store.js';
import { capturingLogger } from '../../support/erpSpy.js';
import { describeStoreContract } from '../../support/storeContract.js';

const dir = mkdtempSync(join(tmpdir(), 'troupe-sqlite-'));
let files = 0;
const nextPath = (): string => join(dir, `store-${++files}.db`);

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describeStoreContract('sqlite (file)', () => openSqliteStore({ path: nextPath() }), {
  reopen: (closed) => openSqliteStore({ path: (closed as SqliteStore).path }),
});

describeStoreContract('sqlite (:memory:)', () => openSqliteStore({ path: ':memory:' }));

/** A response as the outbox stores it. */
const outboxResponse = (key: string) => ({
  idempotencyKey: key,
  channel: { kind: 'test', id: 'room' },
  text: key,
  attachments: [],
  origin: { kind: 'notice' as const },
  preparedAt: 0,
});

/** Records a response per key, at its time, one after the other. */
async function recordAll(store: TroupeStore, entries: readonly (readonly [string, number])[]): Promise<void> {
  for (const [key, at] of entries) await store.outbox.record(outboxResponse(key), at);
}

/** A history line of channel `ch` nobody waits for. */
const line = (text: string) => ({
  channelId: 'ch',
  messageId: 'm1',
  at: 1,
  author: { kind: 'human' as const, id: 'u', name: 'Ann' },
  text,
});

async function rejection(promise: Promise<unknown>): Promise<Error & { code?: string; retryable?: boolean }> {
  try {
    await promise;
  } catch (error) {
    return error as Error & { code?: string; retryable?: boolean };
  }
  throw new Error('expected a rejection');
}

describe('sqlite store: the file', () => {
  it('uses WAL, records its schema version and reports its kind and path', async () => {
    const path = nextPath();
    const store = await openSqliteStore({ path });
    expect(store.kind).toBe('sqlite');
    expect(store.path).toBe(path);
    expect(store.schemaVersion).toBe(SQLITE_SCHEMA_VERSION);
    const raw = new Database(path, { readonly: true });
    expect(raw.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(raw.pragma('user_version', { simple: true })).toBe(SQLITE_SCHEMA_VERSION);
    raw.close();
    await store.close();
  });

  it('creates missing directories on the way to the file', async () => {
    const path = join(dir, 'data', 'nested', 'troupe.db');
    const store = await openSqliteStore({ path });
    await store.documents.put('c', 'k', 'v');
    await store.close();
    expect(readFileSync(path).subarray(0, 15).toString()).toBe('SQLite format 3');
  });

  it('refuses a file that is not a SQLite database, with a coded error, and leaves it alone', async () => {
    const path = join(dir, 'notes.txt');
    const text = 'Dear diary, today I stored JSON in a text file.\n'.repeat(50);
    writeFileSync(path, text);
    const error = await rejection(openSqliteStore({ path }));
    expect(error.code).toBe('TROUPE_STORE_CORRUPT');
    expect(error.message).toContain(path);
    expect(error.message).toContain('not a SQLite database');
    expect(readFileSync(path, 'utf8')).toBe(text);
  });

  it('reports a path whose directory cannot be created as unavailable, naming the path and the reason', async () => {
    const blocker = join(dir, 'a-regular-file');
    writeFileSync(blocker, 'x');
    const path = join(blocker, 'sub', 'troupe.db');
    const error = await rejection(openSqliteStore({ path }));
    expect(error.code).toBe('TROUPE_STORE_UNAVAILABLE');
    expect(error.retryable).toBe(true);
    expect(error.message).toContain(path);
    expect(error.message).toMatch(/ENOTDIR|EEXIST/);
  });

  it('reports a directory given as the file as unavailable', async () => {
    const path = join(dir, 'a-directory');
    mkdirSync(path);
    const error = await rejection(openSqliteStore({ path }));
    expect(error.code).toBe('TROUPE_STORE_UNAVAILABLE');
    expect(error.message).toContain(path);
    expect(error.message).toContain('directory');
  });

  it('reports a write another process holds the lock against as TROUPE_STORE_BUSY (retryable), naming the file and what to do', async () => {
    const path = nextPath();
    const store = await openSqliteStore({ path, busyTimeoutMs: 10 });
    await store.documents.put('c', 'before', 1);
    const other = new Database(path);
    other.exec('BEGIN EXCLUSIVE');
    const error = await rejection(
      store.documents.batch([{ op: 'put', collection: 'c', key: 'k', value: 1 }]),
    );
    other.exec('COMMIT');
    other.close();
    expect(error.code).toBe('TROUPE_STORE_BUSY');
    expect(error.retryable).toBe(true);
    expect(error.message).toContain(`The SQLite store at ${path} is held by another process`);
    expect(error.message).toContain('waited 10 ms');
    expect(error.message).toContain('wait for it to finish or stop it');
    // Nothing of the write was made; once the lock is gone it goes through.
    expect(await store.documents.get('c', 'k')).toBeUndefined();
    await store.documents.batch([{ op: 'put', collection: 'c', key: 'k', value: 1 }]);
    expect((await store.documents.get('c', 'k'))?.value).toBe(1);
    await store.close();
  });

  it('queues writes while another process holds the lock, the event loop running meanwhile; once it is free they are stored in order, and a read asked after them sees them', async () => {
    const path = nextPath();
    const store = await openSqliteStore({ path, busyTimeoutMs: 60_000 });
    await store.documents.put('c', 'k', 'v1');
    const other = new Database(path);
    other.exec('BEGIN IMMEDIATE');
    // Before, each of these calls stopped the whole process until the lock was free.
    const settled: string[] = [];
    const first = store.documents.put('c', 'k', 'v2', { expectedVersion: 1 }).then((v) => {
      settled.push('first');
      return v;
    });
    store.history.appendNow?.(line('queued line'));
    const read = store.documents.get('c', 'k').then((d) => {
      settled.push('read');
      return d;
    });
    const second = store.documents.put('c', 'k', 'v3', { expectedVersion: 2 });
    // Turns of the event loop pass, timers fire: nothing waits inside SQLite.
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(settled).toEqual([]);
    other.exec('COMMIT');
    other.close();
    expect(await first).toBe(2);
    expect((await read)?.value).toBe('v2');
    expect(await second).toBe(3);
    expect((await store.history.recent('ch', 10)).map((l) => l.text)).toEqual(['queued line']);
    await store.close();
  });

  it('fails writes still queued past the busy timeout with TROUPE_STORE_BUSY (a line nobody waits for is logged as lost), reads run; closing fails what waits as closed', async () => {
    const path = nextPath();
    const { logger, lines } = capturingLogger();
    const store = await openSqliteStore({ path, busyTimeoutMs: 30, logger });
    await store.documents.put('c', 'before', 1);
    const other = new Database(path);
    other.exec('BEGIN IMMEDIATE');
    let turns = 0;
    const counting = setInterval(() => turns++, 1);
    const write = rejection(store.documents.put('c', 'k', 1));
    store.history.appendNow?.(line('lost line'));
    const read = store.documents.get('c', 'before');
    const error = await write;
    clearInterval(counting);
    expect(turns).toBeGreaterThan(0); // timers ran while it waited
    expect(error.code).toBe('TROUPE_STORE_BUSY');
    expect(error.message).toContain('waited 30 ms');
    expect((await read)?.value).toBe(1);
    expect(lines.some((l) => String(l.msg).startsWith('1 write(s) were not stored'))).toBe(true);
    // What waits when the store closes fails as closed.
    const waiting = rejection(store.documents.put('c', 'k2', 1));
    await store.close();
    const closed = await waiting;
    expect(closed.code).toBe('TROUPE_STORE_UNAVAILABLE');
    expect(closed.message).toContain('is closed');
    other.exec('COMMIT');
    other.close();
    const check = await openSqliteStore({ path });
    expect(await check.documents.get('c', 'k')).toBeUndefined();
    expect(await check.documents.get('c', 'k2')).toBeUndefined();
    expect(await check.history.recent('ch', 10)).toEqual([]);
    await check.close();
  });

  it('reports a write SQLite finds no room for (SQLITE_FULL) as TROUPE_STORE_FULL, naming where to free space; nothing is written', async () => {
    const path = nextPath();
    const setup = await openSqliteStore({ path });
    await setup.documents.put('c', 'small', 1);
    await setup.close();
    const store = await openSqliteStore({ path, maxSizeBytes: 1 });
    const big = 'x'.repeat(50_000);
    const error = await rejection(
      store.documents.batch([
        { op: 'put', collection: 'c', key: 'a', value: 2 },
        { op: 'put', collection: 'c', key: 'b', value: big },
      ]),
    );
    expect(error.code).toBe('TROUPE_STORE_FULL');
    expect(error.retryable).toBe(true);
    expect(error.message).toContain(`The SQLite store at ${path} is full (SQLITE_FULL`);
    expect(error.message).toContain(`free disk space in ${dir}`);
    expect(await store.documents.get('c', 'a')).toBeUndefined();
    expect((await store.documents.get('c', 'small'))?.value).toBe(1);
    await store.close();
    const roomy = await openSqliteStore({ path });
    await roomy.documents.put('c', 'b', big);
    expect((await roomy.documents.get('c', 'b'))?.value).toBe(big);
    await roomy.close();
  });

  it('upgrades a database written by an older schema, keeping its data', async () => {
    const path = nextPath();
    const old = new Database(path);
    old.pragma('journal_mode = WAL');
    old.exec(sqliteMigrations[0] as string);
    old.pragma('user_version = 1');
    old
      .prepare('INSERT INTO documents (collection, key, value, version, updated_at) VALUES (?, ?, ?, ?, ?)')
      .run('channels', 'room', JSON.stringify({ floor: 'old' }), 4, 123);
    old.close();

    const store = await openSqliteStore({ path });
    expect(store.schemaVersion).toBe(SQLITE_SCHEMA_VERSION);
    expect(await store.documents.get('channels', 'room')).toEqual({
      collection: 'channels',
      key: 'room',
      value: { floor: 'old' },
      version: 4,
      updatedAt: 123,
    });
    await store.history.append({
      channelId: 'c',
      messageId: 'm1',
      at: 1,
      author: { kind: 'human', id: 'u', name: 'Ada' },
      text: 'hi',
    });
    expect(await store.history.recent('c', 5)).toHaveLength(1);
    await store.close();
  });

  it('upgrades a version 2 database: no index of documents by write time, expiry as before', async () => {
    const path = nextPath();
    const old = new Database(path);
    old.pragma('journal_mode = WAL');
    old.exec(sqliteMigrations[0] as string);
    old.exec(sqliteMigrations[1] as string);
    old.pragma('user_version = 2');
    const insert = old.prepare(
      'INSERT INTO documents (collection, key, value, version, updated_at) VALUES (?, ?, ?, ?, ?)',
    );
    insert.run('channels', 'idle', '{"n":1}', 1, 100);
    insert.run('channels', 'busy', '{"n":2}', 3, 5_000);
    insert.run('other', 'idle', '{"n":3}', 1, 100);
    old.close();

    const store = await openSqliteStore({ path });
    expect(store.schemaVersion).toBe(SQLITE_SCHEMA_VERSION);
    const raw = new Database(path, { readonly: true });
    const indexes = raw
      .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'documents'")
      .all()
      .map((r) => (r as { name: string }).name);
    raw.close();
    expect(indexes).not.toContain('documents_idle');
    expect(await store.documents.expireIdle('channels', 1_000)).toBe(1);
    expect(await store.documents.get('channels', 'idle')).toBeUndefined();
    expect((await store.documents.get('channels', 'busy'))?.version).toBe(3);
    expect((await store.documents.get('other', 'idle'))?.value).toEqual({ n: 3 });
    await store.close();
  });

  it('upgrades a version 3 database: settlements move beside the outbox, entries read as before', async () => {
    const path = nextPath();
    const old = new Database(path);
    old.pragma('journal_mode = WAL');
    for (const migration of sqliteMigrations.slice(0, 3)) old.exec(migration);
    old.pragma('user_version = 3');
    const sent = { index: 0, kind: 'text' as const, messageId: 'platform-0', attempts: 1 };
    const insert = old.prepare(
      'INSERT INTO outbox (key, response, recorded_at, sent_parts, settled) VALUES (?, ?, ?, ?, ?)',
    );
    insert.run(
      'done',
      JSON.stringify(outboxResponse('done')),
      10,
      JSON.stringify([sent]),
      '{"at":11,"sent":true}',
    );
    insert.run('open', JSON.stringify(outboxResponse('open')), 20, '[]', null);
    old.close();

    const store = await openSqliteStore({ path });
    expect(store.schemaVersion).toBe(SQLITE_SCHEMA_VERSION);
    expect(await store.outbox.get('done')).toEqual({
      key: 'done',
      response: outboxResponse('done'),
      recordedAt: 10,
      sentParts: [sent],
      settled: { at: 11, sent: true },
    });
    expect((await store.outbox.unsettled()).map((e) => e.key)).toEqual(['open']);
    await store.outbox.settle('open', { at: 21, sent: true }, { ...sent, messageId: 'platform-1' });
    expect(await store.outbox.get('open')).toMatchObject({
      sentParts: [{ ...sent, messageId: 'platform-1' }],
      settled: { at: 21, sent: true },
    });
    expect(await store.outbox.unsettled()).toEqual([]);
    const raw = new Database(path, { readonly: true });
    const names = raw.prepare("SELECT name FROM sqlite_master WHERE tbl_name = 'outbox'").all();
    const columns = raw.prepare("SELECT name FROM pragma_table_info('outbox')").all();
    raw.close();
    expect(names).not.toContainEqual({ name: 'outbox_unsettled' });
    expect(columns).not.toContainEqual({ name: 'settled' });
    await store.close();
  });

  it('keeps each settlement on its entry in a copy made row by row, as a dump and restore makes it', async () => {
    const path = nextPath();
    const store = await openSqliteStore({ path, outboxRetentionMs: 10 });
    await recordAll(store, [
      ['old', 0],
      ['open', 1_000],
      ['done', 1_000],
    ]);
    await store.outbox.settle('old', { at: 1, sent: true });
    await store.outbox.settle('done', { at: 1_001, sent: true });
    expect(await store.outbox.expire?.(500)).toBe(1); // a gap before the entries left
    await store.close();

    const copy = nextPath();
    const db = new Database(copy);
    db.exec(`ATTACH '${path}' AS source`);
    const tables = db
      .prepare("SELECT name, sql FROM source.sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
      .all() as { name: string; sql: string }[];
    for (const { name, sql } of tables) {
      db.exec(sql);
      // Row by row, as a dump's INSERT statements (`WHERE true` keeps SQLite from copying pages whole).
      db.exec(`INSERT INTO main.${name} SELECT * FROM source.${name} WHERE true`);
    }
    db.pragma(`user_version = ${SQLITE_SCHEMA_VERSION}`);
    db.close();

    const restored = await openSqliteStore({ path: copy });
    expect((await restored.outbox.unsettled()).map((e) => e.key)).toEqual(['open']);
    expect((await restored.outbox.get('done'))?.settled).toEqual({ at: 1_001, sent: true });
    await restored.outbox.record(outboxResponse('new'), 2_000);
    expect((await restored.outbox.get('new'))?.settled).toBeUndefined();
    await restored.close();
  });

  it('an entry recorded where an expired one was is not settled by the old settlement', async () => {
    const store = await openSqliteStore({ path: nextPath(), outboxRetentionMs: 1_000 });
    await store.outbox.record(outboxResponse('first'), 100);
    await store.outbox.settle('first', { at: 101, sent: true });
    expect(await store.outbox.expire?.(5_000)).toBe(1);
    // The outbox is empty: SQLite hands the first rowid out again.
    await store.outbox.record(outboxResponse('second'), 6_000);
    expect((await store.outbox.unsettled()).map((e) => e.key)).toEqual(['second']);
    expect((await store.outbox.get('second'))?.settled).toBeUndefined();
    await store.close();
  });

  it('a settle after the group that recorded its entry rolled back settles nothing else', async () => {
    const path = nextPath();
    const setup = await openSqliteStore({ path });
    await setup.close();
    // Room for a row in the pages the file has, none for a document that needs more.
    const store = await openSqliteStore({ path, maxSizeBytes: statSync(path).size });
    const lost = await Promise.allSettled([
      store.outbox.record(outboxResponse('lost'), 1),
      store.documents.put('c', 'big', 'x'.repeat(50_000)),
    ]);
    expect(lost.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    await store.outbox.record(outboxResponse('kept'), 2);
    await store.outbox.settle('lost', { at: 3, sent: true });
    expect(await store.outbox.get('lost')).toBeUndefined();
    expect((await store.outbox.unsettled()).map((e) => e.key)).toEqual(['kept']);
    await store.close();
  });

  it('expires settled outbox entries recorded before its retention, never one not settled', async () => {
    const store = await openSqliteStore({ path: nextPath(), outboxRetentionMs: 1_000 });
    const response = outboxResponse;
    await recordAll(store, [
      ['old-settled', 100],
      ['old-pending', 200],
      ['recent-settled', 1_500],
    ]);
    await store.outbox.settle('old-settled', { at: 150, sent: true });
    await store.outbox.settle('recent-settled', { at: 1_600, sent: true });
    expect(await store.outbox.expire?.(Number.NaN)).toBe(0);
    expect(await store.outbox.expire?.(2_100)).toBe(1);
    expect(await store.outbox.get('old-settled')).toBeUndefined();
    expect((await store.outbox.unsettled()).map((e) => e.key)).toEqual(['old-pending']);
    expect((await store.outbox.get('recent-settled'))?.settled).toMatchObject({ sent: true });
    expect(await store.outbox.expire?.(2_100)).toBe(0);
    // A reply whose entry expired is a new reply if it comes again: recorded afresh.
    expect((await store.outbox.record(response('old-settled'), 2_200)).created).toBe(true);
    await store.close();

    // Many at once: deleted a span at a time, all of them, up to the recent ones.
    const many = await openSqliteStore({ path: nextPath(), outboxRetentionMs: 1_000 });
    await many.outbox.record(response('pending-first'), 1);
    const keys = Array.from({ length: 5_500 }, (_, i) => `many-${i}`);
    await Promise.all(keys.map((key, i) => many.outbox.record(response(key), 10 + i)));
    await Promise.all(keys.map((key) => many.outbox.settle(key, { at: 6_000, sent: true })));
    await many.outbox.record(response('recent'), 9_000);
    await many.outbox.settle('recent', { at: 9_001, sent: true });
    expect(await many.outbox.expire?.(9_500)).toBe(5_500);
    expect((await many.outbox.unsettled()).map((e) => e.key)).toEqual(['pending-first']);
    expect(await many.outbox.get('recent')).toBeDefined();
    await many.close();

    const forever = await openSqliteStore({ path: nextPath(), outboxRetentionMs: Number.POSITIVE_INFINITY });
    await forever.outbox.record(response('kept'), 1);
    await forever.outbox.settle('kept', { at: 2, sent: true });
    expect(await forever.outbox.expire?.(10 ** 12)).toBe(0);
    await forever.close();
  });

  it('cuts its write-ahead log back to 64 MiB when the log starts over after a burst', async () => {
    const path = nextPath();
    const store = await openSqliteStore({ path, checkpoints: { by: 'writer' } });
    await store.documents.put('c', 'k', 'first');
    // A reader's snapshot keeps the log from starting over while the burst writes 80 MB.
    const reader = new Database(path, { readonly: true });
    reader.exec('BEGIN');
    reader.prepare('SELECT count(*) FROM documents').get();
    // Each value differs from the key's last on every page: SQLite leaves an unchanged page unwritten.
    const big = (i: number) => String.fromCharCode(97 + (i % 26)).repeat(1 << 20);
    for (let i = 0; i < 80; i++) await store.documents.put('c', `big${i % 10}`, big(i));
    reader.exec('COMMIT');
    reader.close();
    const wal = `${path}-wal`;
    expect(statSync(wal).size).toBeGreaterThan(80 * 1024 * 1024);
    const checkpointer = new Database(path);
    checkpointer.pragma('wal_checkpoint(PASSIVE)');
    checkpointer.close();
    // The next commit starts the log over, from the top of the file.
    await store.documents.put('c', 'k', 'after');
    expect(statSync(wal).size).toBeLessThanOrEqual(64 * 1024 * 1024);
    expect((await store.documents.get('c', 'big9'))?.value).toBe(big(79));
    await store.close();
  });

  it('refuses a database written by a newer schema', async () => {
    const path = nextPath();
    const raw = new Database(path);
    raw.pragma(`user_version = ${SQLITE_SCHEMA_VERSION + 7}`);
    raw.close();
    const error = await rejection(openSqliteStore({ path }));
    expect(error.code).toBe('TROUPE_STORE_UNAVAILABLE');
    expect(error.message).toContain('newer Troupe');
  });

  it('reports a stored row that cannot be parsed as corrupt, naming collection and key', async () => {
    const path = nextPath();
    const store = await openSqliteStore({ path });
    await store.documents.put('channels', 'room-7', { ok: true });
    await store.memory.put('prefs', 'tone', 'warm');
    const raw = new Database(path);
    raw.prepare("UPDATE documents SET value = '{not json' WHERE key = 'room-7'").run();
    raw.prepare("UPDATE memory_versions SET value = 'nope' WHERE key = 'tone'").run();
    raw.close();
    const error = await rejection(store.documents.get('channels', 'room-7'));
    expect(error.code).toBe('TROUPE_STORE_CORRUPT');
    expect(error.message).toContain('channels/room-7');
    expect((await rejection(store.documents.list('channels'))).code).toBe('TROUPE_STORE_CORRUPT');
    const memoryError = await rejection(store.memory.get('prefs', 'tone'));
    expect(memoryError.code).toBe('TROUPE_STORE_CORRUPT');
    expect(memoryError.message).toContain('prefs/tone');
    await store.close();
  });

  it('trims history in batches, keeping the newest lines per channel', async () => {
    const path = nextPath();
    const store = await openSqliteStore({ path, historyPerChannel: 5 });
    for (let n = 1; n <= 23; n++)
      await store.history.append({
        channelId: n % 2 === 0 ? 'even' : 'odd',
        messageId: `m${n}`,
        at: n,
        author: { kind: 'human', id: 'u', name: 'U' },
        text: `${n}`,
      });
    expect((await store.history.recent('odd', 100)).map((e) => e.messageId)).toEqual([
      'm15',
      'm17',
      'm19',
      'm21',
      'm23',
    ]);
    const raw = new Database(path, { readonly: true });
    const rows = raw.prepare('SELECT channel_id, count(*) AS n FROM history GROUP BY channel_id').all() as {
      n: number;
    }[];
    raw.close();
    for (const row of rows) expect(row.n).toBeLessThanOrEqual(10);
    await store.close();
  });
});

describe('sqlite store: writes of one tick', () => {
  /** Frames in the file's write-ahead log (each commit appends the pages it changed). */
  const walFrames = (path: string): number => {
    const raw = new Database(path);
    try {
      return (raw.pragma('wal_checkpoint(PASSIVE)') as { log: number }[])[0]?.log ?? 0;
    } finally {
      raw.close();
    }
  };

  it('commit together in one transaction: far fewer log frames than the same writes awaited one by one', async () => {
    const apart = nextPath();
    const a = await openSqliteStore({ path: apart });
    for (let i = 0; i < 200; i++) await a.documents.put('c', `k${i}`, { i });
    const together = nextPath();
    const b = await openSqliteStore({ path: together });
    await Promise.all(Array.from({ length: 200 }, (_, i) => b.documents.put('c', `k${i}`, { i })));
    // Counted while the stores are open (the last connection to close checkpoints the log away).
    const framesApart = walFrames(apart);
    const framesTogether = walFrames(together);
    expect(framesTogether).toBeGreaterThan(0);
    expect(framesTogether * 10).toBeLessThan(framesApart);
    await a.close();
    await b.close();
  });

  it('fail alone: a lost compare-and-set among them rolls back only itself', async () => {
    const store = await openSqliteStore({ path: nextPath() });
    await store.documents.put('c', 'taken', 'first');
    const results = await Promise.allSettled([
      store.documents.put('c', 'one', 1),
      store.documents.putMany<unknown>('c', [
        { key: 'two', value: 2 },
        { key: 'taken', value: 'stale', expectedVersion: 0 },
      ]),
      store.outbox.settle('nothing', { sent: true, at: 1 }),
      store.documents.put('c', 'three', 3),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    expect((await store.documents.get('c', 'one'))?.value).toBe(1);
    expect(await store.documents.get('c', 'two')).toBeUndefined();
    expect((await store.documents.get('c', 'taken'))?.value).toBe('first');
    expect((await store.documents.get('c', 'three'))?.value).toBe(3);
    await store.close();
  });

  it('a batch checks its compare-and-sets before writing: a later one that would lose writes nothing of it', async () => {
    const store = await openSqliteStore({ path: nextPath() });
    await store.documents.put('c', 'gone', 'old');
    await store.documents.put('c', 'taken', 'first');
    const [lost, beside] = await Promise.allSettled([
      store.documents.batch([
        { op: 'put', collection: 'c', key: 'new', value: 1 },
        { op: 'delete', collection: 'c', key: 'gone' },
        { op: 'put', collection: 'other', key: 'x', value: 2, expectedVersion: 0 },
        { op: 'put', collection: 'c', key: 'taken', value: 'stale', expectedVersion: 0 },
      ]),
      store.documents.put('c', 'beside', 3),
    ]);
    expect(lost).toMatchObject({ status: 'rejected', reason: { code: 'TROUPE_STORE_CONFLICT' } });
    expect(beside.status).toBe('fulfilled');
    expect(await store.documents.get('c', 'new')).toBeUndefined();
    expect((await store.documents.get('c', 'gone'))?.value).toBe('old');
    expect(await store.documents.get('other', 'x')).toBeUndefined();
    expect((await store.documents.get('c', 'taken'))?.value).toBe('first');
    expect((await store.documents.get('c', 'beside'))?.value).toBe(3);
    await store.close();
  });

  it('a batch that writes one document twice is checked against the versions it makes itself', async () => {
    const store = await openSqliteStore({ path: nextPath() });
    await store.documents.put('c', 'k', 'v1');
    expect(
      await store.documents.batch([
        { op: 'put', collection: 'c', key: 'k', value: 'v2' },
        { op: 'put', collection: 'c', key: 'k', value: 'v3', expectedVersion: 2 },
        { op: 'delete', collection: 'c', key: 'k', expectedVersion: 3 },
        { op: 'put', collection: 'c', key: 'k', value: 'again', expectedVersion: 0 },
      ]),
    ).toEqual([2, 3, true, 1]);
    expect(await store.documents.get('c', 'k')).toMatchObject({ value: 'again', version: 1 });
    await expect(
      store.documents.batch([
        { op: 'delete', collection: 'c', key: 'k', expectedVersion: 7 },
        { op: 'put', collection: 'c', key: 'k', value: 'no', expectedVersion: 0 },
      ]),
    ).rejects.toMatchObject({ code: 'TROUPE_STORE_CONFLICT' });
    expect(await store.documents.get('c', 'k')).toMatchObject({ value: 'again', version: 1 });
    await store.close();
  });

  it('a write that fails midway (a full disk) fails its whole group, which is rolled back; the next tick writes again', async () => {
    const path = nextPath();
    const setup = await openSqliteStore({ path });
    await setup.documents.put('c', 'small', 1);
    await setup.close();
    const store = await openSqliteStore({ path, maxSizeBytes: 1 });
    const results = await Promise.allSettled([
      store.documents.put('c', 'a', 2),
      store.outbox.settle('nothing', { sent: true, at: 1 }),
      store.documents.put('c', 'b', 'x'.repeat(50_000)),
    ]);
    expect(results.map((r) => (r.status === 'rejected' ? r.reason.code : 'stored'))).toEqual([
      'TROUPE_STORE_FULL',
      'TROUPE_STORE_FULL',
      'TROUPE_STORE_FULL',
    ]);
    expect(await store.documents.get('c', 'a')).toBeUndefined();
    expect((await store.documents.get('c', 'small'))?.value).toBe(1);
    await store.documents.put('c', 'small', 'updated in place');
    expect((await store.documents.get('c', 'small'))?.value).toBe('updated in place');
    await store.close();
  });

  it('a history line appended at once (no promise) is stored when its tick commits; a lost group logs it', async () => {
    const path = nextPath();
    const store = await openSqliteStore({ path });
    const line = (messageId: string, text: string) => ({
      channelId: 'ch',
      messageId,
      at: 1,
      author: { kind: 'human' as const, id: 'u', name: 'Ada' },
      text,
    });
    store.history.appendNow?.(line('m1', 'hi'));
    // The same connection reads the open group; another one only once it commits.
    expect((await store.history.recent('ch', 5)).map((l) => l.text)).toEqual(['hi']);
    await store.documents.put('c', 'after', 1); // resolves once the group (with the line) commits
    const raw = new Database(path, { readonly: true });
    expect(raw.prepare('SELECT text FROM history').all()).toEqual([{ text: 'hi' }]);
    raw.close();
    expect(() => store.history.appendNow?.({ ...line('m2', 'x'), at: Number.NaN })).toThrow(
      expect.objectContaining({ code: 'TROUPE_STORE_INVALID_VALUE' }),
    );
    await store.close();

    const { logger, lines } = capturingLogger();
    const full = await openSqliteStore({ path, maxSizeBytes: 1, logger });
    full.history.appendNow?.(line('m3', 'lost'));
    await expect(full.documents.put('c', 'big', 'x'.repeat(50_000))).rejects.toMatchObject({
      code: 'TROUPE_STORE_FULL',
    });
    expect(lines).toContainEqual(
      expect.objectContaining({ operations: ['history.append'], count: 1, code: 'TROUPE_STORE_FULL' }),
    );
    expect((await full.history.recent('ch', 5)).map((l) => l.text)).toEqual(['hi']);
    await full.close();
  });

  it('are stored once their promise resolves: another connection reads them', async () => {
    const path = nextPath();
    const store = await openSqliteStore({ path });
    await Promise.all([
      store.documents.put('c', 'a', 1),
      store.history.append({
        channelId: 'ch',
        messageId: 'm1',
        at: 1,
        author: { kind: 'human', id: 'u', name: 'Ada' },
        text: 'hi',
      }),
    ]);
    const raw = new Database(path, { readonly: true });
    expect(raw.prepare('SELECT COUNT(*) AS n FROM documents').get()).toEqual({ n: 1 });
    expect(raw.prepare('SELECT COUNT(*) AS n FROM history').get()).toEqual({ n: 1 });
    raw.close();
    await store.close();
  });
});

describe('sqlite store: two stores on one file (as two processes would)', () => {
  const both = async (): Promise<[TroupeStore, TroupeStore, () => Promise<void>]> => {
    const path = nextPath();
    const a = await openSqliteStore({ path });
    const b = await openSqliteStore({ path });
    return [a, b, async () => void (await Promise.all([a.close(), b.close()]))];
  };

  it("see each other's writes", async () => {
    const [a, b, close] = await both();
    await a.documents.put('c', 'k', { from: 'a' });
    expect(await b.documents.get('c', 'k')).toMatchObject({ value: { from: 'a' }, version: 1 });
    await b.memory.put('ns', 'k', 'from b');
    expect((await a.memory.get('ns', 'k'))?.value).toBe('from b');
    await a.outbox.record(
      {
        idempotencyKey: 'r1',
        channel: { kind: 'terminal', id: 'c' },
        text: 'hi',
        attachments: [],
        origin: { kind: 'answer' },
        preparedAt: 1,
      },
      1,
    );
    expect((await b.outbox.unsettled()).map((e) => e.key)).toEqual(['r1']);
    await b.outbox.settle('r1', { at: 2, sent: true });
    expect(await a.outbox.unsettled()).toEqual([]);
    await close();
  });

  it('a profile read again after the other store wrote a version reads that version', async () => {
    const path = nextPath();
    const a = await openSqliteStore({ path });
    const b = await openSqliteStore({ path });
    const close = async () => void (await Promise.all([a.close(), b.close()]));
    // None yet, as both see it; then one writes the first.
    expect(await a.memory.get('ns', 'profile')).toBeUndefined();
    expect(await b.memory.get('ns', 'profile')).toBeUndefined();
    await a.memory.put('ns', 'profile', { text: 'v1' });
    // Read (and kept) by both, then changed by one: the other reads the change at once.
    expect((await a.memory.get('ns', 'profile'))?.value).toEqual({ text: 'v1' });
    expect((await b.memory.get('ns', 'profile'))?.version).toBe(1);
    await b.memory.put('ns', 'profile', { text: 'v2 by b' }, { expectedVersion: 1 });
    expect(await a.memory.get('ns', 'profile')).toMatchObject({ value: { text: 'v2 by b' }, version: 2 });
    await a.memory.put('ns', 'profile', { text: 'v3 by a' }, { expectedVersion: 2 });
    expect(await b.memory.get('ns', 'profile')).toMatchObject({ value: { text: 'v3 by a' }, version: 3 });
    expect((await a.memory.get('ns', 'profile'))?.version).toBe(3);
    // What a reader gets is its own copy.
    const mine = (await a.memory.get<{ text: string }>('ns', 'profile'))?.value as { text: string };
    mine.text = 'changed by the caller';
    expect((await a.memory.get('ns', 'profile'))?.value).toEqual({ text: 'v3 by a' });
    // Written outside Troupe (another program on the file): read as written.
    const raw = new Database(path);
    raw
      .prepare(
        'INSERT INTO memory_versions (namespace, key, version, value, at, source) VALUES (?, ?, ?, ?, ?, ?)',
      )
      .run('ns', 'profile', 4, JSON.stringify({ text: 'v4 outside' }), 4, null);
    raw.close();
    expect(await a.memory.get('ns', 'profile')).toMatchObject({ value: { text: 'v4 outside' }, version: 4 });
    await close();
  });

  it("a profile kept parsed is never another key's, nor changed by a lost write or a caller", async () => {
    const [a, b, close] = await both();
    // Keys that would be the same text if namespace and key were only joined by a NUL.
    await a.memory.put('a\0b', 'c', 'of a\\0b/c');
    expect(await a.memory.get('a', 'b\0c')).toBeUndefined();
    await a.memory.put('a', 'b\0c', 'of a/b\\0c');
    expect((await a.memory.get('a\0b', 'c'))?.value).toBe('of a\\0b/c');
    expect((await a.memory.get('a', 'b\0c'))?.value).toBe('of a/b\\0c');
    // A compare-and-set that lost leaves what is read as it was.
    const first = await a.memory.put('ns', 'p', { text: 'v1' }, { expectedVersion: 0 });
    expect((await rejection(a.memory.put('ns', 'p', { text: 'lost' }, { expectedVersion: 0 }))).code).toBe(
      'TROUPE_STORE_CONFLICT',
    );
    expect(await a.memory.get('ns', 'p')).toEqual(first);
    // What put gives back is the caller's to change.
    (first.value as { text: string }).text = 'changed by the caller';
    expect((await a.memory.get('ns', 'p'))?.value).toEqual({ text: 'v1' });
    // More keys than are kept: each still reads its latest, also after the other store wrote some.
    for (let i = 0; i < 300; i++) await a.memory.put('many', `k${i}`, i);
    for (let i = 0; i < 300; i += 7) await b.memory.put('many', `k${i}`, -i - 1);
    for (let i = 0; i < 300; i++)
      expect((await a.memory.get('many', `k${i}`))?.value).toBe(i % 7 === 0 ? -i - 1 : i);
    // A document written by the other store changes nothing that is read.
    await b.documents.put('c', 'k', 1);
    expect((await a.memory.get('ns', 'p'))?.value).toEqual({ text: 'v1' });
    await close();
  });

  it('a profile kept parsed by one process is read anew after another process wrote it', async () => {
    const path = nextPath();
    const store = await openSqliteStore({ path });
    // Another process (node with tsx, as the tests run) writing the next version and exiting.
    const storeModule = fileURLToPath(
      new URL('../../../src/adapters/store/sqlite/sqliteStore.ts', import.meta.url),
    );
    const writeInOtherProcess = (expectedVersion: number, value: unknown): number =>
      Number(
        execFileSync(
          process.execPath,
          [
            '--import',
            'tsx',
            '--input-type=module',
            '-e',
            `const { openSqliteStore } = await import(${JSON.stringify(pathToFileURL(storeModule).href)});
            const store = await openSqliteStore({ path: process.argv[1] });
            const written = await store.memory.put('ns', 'p', JSON.parse(process.argv[3]), { expectedVersion: Number(process.argv[2]) });
            await store.close();
            process.stdout.write(String(written.version));`,
            path,
            String(expectedVersion),
            JSON.stringify(value),
          ],
          { encoding: 'utf8' },
        ),
      );
    expect(await store.memory.get('ns', 'p')).toBeUndefined();
    expect(writeInOtherProcess(0, { text: 'by the other process' })).toBe(1);
    expect(await store.memory.get('ns', 'p')).toMatchObject({
      value: { text: 'by the other process' },
      version: 1,
    });
    await store.memory.put('ns', 'p', { text: 'by this one' }, { expectedVersion: 1 });
    expect(writeInOtherProcess(2, { text: 'by the other again' })).toBe(2 + 1);
    expect(await store.memory.get('ns', 'p')).toMatchObject({
      value: { text: 'by the other again' },
      version: 3,
    });
    await store.close();
  });

  it('keep compare-and-set honest between them', async () => {
    const [a, b, close] = await both();
    await a.documents.put('c', 'k', 'v1');
    const seenByA = (await a.documents.get('c', 'k'))?.version as number;
    expect(await b.documents.put('c', 'k', 'v2 by b', { expectedVersion: seenByA })).toBe(2);
    const error = await rejection(a.documents.put('c', 'k', 'v2 by a', { expectedVersion: seenByA }));
    expect(error.code).toBe('TROUPE_STORE_CONFLICT');
    expect((await a.documents.get('c', 'k'))?.value).toBe('v2 by b');
    const batch = await rejection(
      a.documents.putMany<unknown>('c', [
        { key: 'fresh', value: 1, expectedVersion: 0 },
        { key: 'k', value: 'stale', expectedVersion: 1 },
      ]),
    );
    expect(batch.code).toBe('TROUPE_STORE_CONFLICT');
    expect(await b.documents.get('c', 'fresh')).toBeUndefined();
    await b.memory.put('ns', 'k', 'b1', { expectedVersion: 0 });
    expect((await rejection(a.memory.put('ns', 'k', 'a1', { expectedVersion: 0 }))).code).toBe(
      'TROUPE_STORE_CONFLICT',
    );
    await close();
  });

  it('mark an id processed exactly once between them, and count together', async () => {
    const [a, b, close] = await both();
    const marks = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        (i % 2 === 0 ? a : b).processed.markProcessed('gmail', 'msg-1', i),
      ),
    );
    expect(marks.filter(Boolean)).toHaveLength(1);
    await Promise.all(Array.from({ length: 100 }, (_, i) => (i % 2 === 0 ? a : b).events.increment('sent')));
    expect(await a.events.counter('sent')).toBe(100);
    expect(await b.events.counter('sent')).toBe(100);
    await close();
  });
});
