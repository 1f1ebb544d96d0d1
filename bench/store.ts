/**
 * Store benchmark: the store port's adapters (SQLite, a temporary file in WAL mode; and the
 * in-memory adapter) with the values the runtime writes, and what it costs to bring persisted
 * channels back:
 *
 *   1. Operations per second, one call at a time (each awaited): documents.put (upsert and
 *      compare-and-set), putMany batches (as the runtime flushes channel snapshots), documents.get,
 *      outbox record + settle, event log append, counter increment, memory.put. The document is a
 *      real channel document: a ChannelFloor with 4 presences, a mention thread and a claimed turn.
 *   2. Restoring 100,000 persisted presences (25,000 channels x 4, real floor snapshots with varied
 *      ids): (a) documents.list in pages of 1,000 and ChannelFloor.restore of each, with where the
 *      time goes; (b) through the real runtime: createRuntime on the store (simulated clock), every
 *      channel activated with runtime.open(), then written back by runtime.stop(); and a share of
 *      the channels activated by one human message each (with the turn it sets off).
 *   3. Heap with the 100,000 presences stored and 1,000 of them active (250 channels, activated by
 *      a message each), against the same runtime with none active and a runtime over an empty store.
 *
 * Prints figures; never asserts.
 *
 *   npm run bench:store                  # 25,000 channels (about 2 minutes on 2 cores)
 *   npm run bench:store -- --quick       # 100x smaller: seconds (CI runs it)
 *   npm run bench:store -- --channels 50000 --cast 24 --json
 *
 * Node flags (package.json), as bench:coordination: --expose-gc for the heap figures;
 * --single-threaded so GC and JIT run on the main thread (the GC share of a phase is printed).
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { CHANNELS, type ChannelDocument, WAKEUPS } from '../src/actors/channelPersistence.js';
import { createMemoryStore } from '../src/adapters/store/memory/memoryStore.js';
import { openSqliteStore } from '../src/adapters/store/sqlite/sqliteStore.js';
import { type CoordinationConfig, defaultCoordinationConfig } from '../src/config/coordinationConfig.js';
import { ChannelFloor } from '../src/floor/channelFloor.js';
import { floorSnapshotSchema } from '../src/floor/floorSnapshotSchema.js';
import { parseFloorSnapshotFast } from '../src/floor/snapshotFastPath.js';
import type { TroupeStore } from '../src/ports/store.js';
import { intArg } from './support/args.js';
import { canMeasureHeap, settledHeap } from './support/heap.js';
import { fixed, int, pct, ratio, table } from './support/report.js';
import {
  type ChannelStage,
  channelKeyOf,
  loggedEvent,
  memoryValue,
  outgoingResponse,
  PRESENCES_PER_CHANNEL,
  type StoredChannel,
  storeCast,
  storedChannel,
} from './support/storeFixtures.js';
import { gcClock, type OpFigure, timeMs, timeOps, timeWallCpu } from './support/storeOps.js';
import { type BenchRuntime, benchRuntime, messageAll, openAll, PERSISTENCE } from './support/storeRuntime.js';
import { printSummary } from './support/summary.js';
import { START_AT } from './support/traffic.js';

// ---------------------------------------------------------------- options

const HELP = `Usage: npm run bench:store -- [options]

  --channels N    stored channels, 4 presences each (default 25000 = 100,000 presences; quick: 200)
  --ops N         calls per operation figure; putMany makes N / batch calls (default 20000; quick: 300)
  --batch N       documents per putMany call (default 100)
  --page N        documents per documents.list page when restoring (default 1000)
  --messages N    channels activated by one human message each, spread over the store
                  (default 5000; quick: 50)
  --active N      channels active in the heap figure, activated by a message each (default 250;
                  quick: 25, within the heap figures' noise)
  --cast N        avatars the runtime knows; every floor's roster (default 100)
  --seed N        seed of the stored channels (default 42)
  --dir PATH      directory for the SQLite files, kept afterwards (operations.db, warm.db and channels.db
                  are replaced); default: a new temporary directory, removed at the end
  --quick         100x smaller: seconds, rough figures
  --json          print the results as JSON instead of tables
  --help          this text
`;

const { values: args } = parseArgs({
  options: {
    channels: { type: 'string' },
    ops: { type: 'string' },
    batch: { type: 'string' },
    page: { type: 'string' },
    messages: { type: 'string' },
    active: { type: 'string' },
    cast: { type: 'string' },
    seed: { type: 'string' },
    dir: { type: 'string' },
    quick: { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
  strict: true,
});

if (args.help) {
  process.stdout.write(HELP);
  process.exit(0);
}

const quick = args.quick;
const channels = intArg(args.channels, quick ? 200 : 25_000, 'channels', 10);
const opsCount = intArg(args.ops, quick ? 300 : 20_000, 'ops', 10);
const batch = intArg(args.batch, 100, 'batch');
const pageSize = intArg(args.page, 1_000, 'page');
const messageChannels = Math.min(channels, intArg(args.messages, quick ? 50 : 5_000, 'messages'));
const activeChannels = Math.min(channels, intArg(args.active, quick ? 25 : 250, 'active'));
const castSize = intArg(args.cast, 100, 'cast', PRESENCES_PER_CHANNEL);
const seed = intArg(args.seed, 42, 'seed', 0);
/** Channels the restore breakdown runs over (the first of the store), several passes. */
const breakdownChannels = Math.min(channels, quick ? 100 : 5_000);
/** Channels of the untimed warm-up runs (on scratch stores). */
const warmChannels = Math.min(1_000, Math.max(100, Math.floor(channels / 10)));

const config: CoordinationConfig = { ...defaultCoordinationConfig };
const cast = storeCast(castSize, seed);
const presencesTotal = channels * PRESENCES_PER_CHANNEL;
/** The runtimes start one second after the stored channels' last writes. */
const RUNTIME_AT = START_AT + 1_000;

const ownDir = args.dir === undefined;
const dir = args.dir ?? mkdtempSync(join(os.tmpdir(), 'troupe-bench-store-'));
const DB_FILES = ['operations.db', 'warm.db', 'channels.db'];
// In a directory of the caller's, files of an earlier run are replaced (every write here creates).
if (!ownDir)
  for (const name of DB_FILES)
    for (const suffix of ['', '-wal', '-shm']) rmSync(join(dir, `${name}${suffix}`), { force: true });
const t0 = performance.now();
/** Other processes' work shows in the figures: the 1-minute load average is printed with them. */
const loadAtStart = os.loadavg();
const log = (line: string) =>
  process.stderr.write(`[${((performance.now() - t0) / 1000).toFixed(1).padStart(5)} s] ${line}\n`);
const gc = gcClock();
let _sink = 0;

// ---------------------------------------------------------------- the stored channels

/**
 * One channel in four holds an open mention thread (written by a flush while it was active, with a
 * wake-up at the thread's deadline); the others are as a channel passivated after 10 idle minutes
 * holds them (the thread ended), written between one and two hours earlier.
 */
const stageOf = (c: number): ChannelStage => (c % 4 === 0 ? 'open' : 'passivated');
const endAtOf = (c: number) => (c % 4 === 0 ? START_AT : START_AT - 7_200_000 + (c % 3_600) * 1_000);
const channelAt = (c: number): StoredChannel => storedChannel(c, cast, config, seed, stageOf(c), endAtOf(c));

const keys = Array.from({ length: channels }, (_, c) => channelKeyOf(c));
/** Spread over the key space, so they mix open and passivated channels as the store does. */
const spread = (n: number) =>
  Array.from({ length: n }, (_, i) => keys[Math.floor((i * channels) / n)] as string);
const messageKeys = spread(messageChannels);
const activeKeys = spread(activeChannels);

interface Population {
  channels: number;
  presences: number;
  wakeups: number;
  /** JSON text of the channel documents. */
  bytes: number;
  /** Building the floors (untimed for the store) and writing them with putMany. */
  buildMs: number;
  writeMs: number;
  docsPerSec: number;
}

/** Writes `count` channels (and their wake-ups) the way the runtime flushes: putMany, `batch` at a time. */
async function populate(store: TroupeStore, count: number): Promise<Population> {
  let presences = 0;
  let wakeups = 0;
  let bytes = 0;
  let buildMs = 0;
  let writeMs = 0;
  for (let from = 0; from < count; from += batch) {
    let t = performance.now();
    const group: StoredChannel[] = [];
    for (let c = from; c < Math.min(count, from + batch); c++) group.push(channelAt(c));
    const writes = group.map((ch) => ({ key: ch.key, value: ch.document, expectedVersion: 0 }));
    const wakes = group.flatMap((ch) =>
      ch.wakeAt === undefined ? [] : [{ key: ch.key, value: { wakeAt: ch.wakeAt } }],
    );
    for (const ch of group) {
      presences += ch.presences;
      bytes += Buffer.byteLength(JSON.stringify(ch.document));
    }
    wakeups += wakes.length;
    buildMs += performance.now() - t;
    t = performance.now();
    await store.documents.putMany(CHANNELS, writes, START_AT);
    if (wakes.length > 0) await store.documents.putMany(WAKEUPS, wakes, START_AT);
    writeMs += performance.now() - t;
  }
  return {
    channels: count,
    presences,
    wakeups,
    bytes,
    buildMs,
    writeMs,
    docsPerSec: count / (writeMs / 1000),
  };
}

// ---------------------------------------------------------------- 1. operations

interface OpSpec {
  name: string;
  label: string;
  calls: number;
  itemsPerCall: number;
  run: (i: number) => Promise<unknown>;
}

/** The operations of section 1 on one store; each keeps its own keys, versions and counters. */
function operationsOn(store: TroupeStore, document: ChannelDocument): OpSpec[] {
  const { documents } = store;
  const KEYS = 1_000;
  const casVersions = new Map<number, number>();
  const manyKeys = Math.max(KEYS, batch * 10);
  const manyVersions = new Map<number, number>();
  return [
    {
      name: 'put',
      label: 'documents.put (upsert)',
      calls: opsCount,
      itemsPerCall: 1,
      run: (i) => documents.put(CHANNELS, `put:${i % KEYS}`, document, { at: START_AT + i }),
    },
    {
      name: 'putCas',
      label: 'documents.put, compare-and-set',
      calls: opsCount,
      itemsPerCall: 1,
      run: async (i) => {
        const k = i % KEYS;
        casVersions.set(
          k,
          await documents.put(CHANNELS, `cas:${k}`, document, {
            expectedVersion: casVersions.get(k) ?? 0,
            at: START_AT + i,
          }),
        );
      },
    },
    {
      name: 'putMany',
      label: `documents.putMany, ${batch} per call, CAS`,
      calls: Math.max(1, Math.ceil(opsCount / batch)),
      itemsPerCall: batch,
      run: async (i) => {
        const ks = Array.from({ length: batch }, (_, j) => (i * batch + j) % manyKeys);
        const versions = await documents.putMany(
          CHANNELS,
          ks.map((k) => ({ key: `many:${k}`, value: document, expectedVersion: manyVersions.get(k) ?? 0 })),
          START_AT + i,
        );
        ks.forEach((k, j) => {
          manyVersions.set(k, versions[j] as number);
        });
      },
    },
    {
      name: 'get',
      label: 'documents.get',
      calls: opsCount,
      itemsPerCall: 1,
      run: (i) => documents.get(CHANNELS, `put:${(i * 7_919) % KEYS}`),
    },
    {
      name: 'outbox',
      label: 'outbox.record + settle',
      calls: opsCount,
      itemsPerCall: 1,
      run: async (i) => {
        const response = outgoingResponse(i, cast);
        await store.outbox.record(response, START_AT + i);
        await store.outbox.settle(response.idempotencyKey, { at: START_AT + i + 5, sent: true });
      },
    },
    {
      name: 'append',
      label: 'events.append',
      calls: opsCount,
      itemsPerCall: 1,
      run: (i) => store.events.append(`channel:${i % 1_000}`, loggedEvent(i), START_AT + i),
    },
    {
      name: 'increment',
      label: 'events.increment',
      calls: opsCount,
      itemsPerCall: 1,
      run: (i) => store.events.increment(`turns.${i % 10}`),
    },
    {
      name: 'memoryPut',
      label: 'memory.put (new version)',
      calls: opsCount,
      itemsPerCall: 1,
      run: (i) =>
        store.memory.put('preferences', `sender-${i % 500}`, memoryValue(i), {
          at: START_AT + i,
          source: `message m${i}`,
        }),
    },
  ];
}

/** Untimed calls (documents, for putMany) before each figure; indices past the timed ones, so outbox keys stay unique. */
const WARM_CALLS = Math.min(500, Math.ceil(opsCount / 10));

async function measureOperations(store: TroupeStore, document: ChannelDocument) {
  const out: Record<string, OpFigure> = {};
  for (const op of operationsOn(store, document)) {
    const warm = Math.min(op.calls, Math.max(5, Math.ceil(WARM_CALLS / op.itemsPerCall)));
    await timeOps(warm, op.run, op.itemsPerCall, 10_000_000);
    out[op.name] = await timeOps(op.calls, op.run, op.itemsPerCall);
  }
  return out;
}

// ---------------------------------------------------------------- 2a. restore

interface RestoreRun {
  channels: number;
  presences: number;
  ms: number;
  cpuPerWall: number;
  gcMs: number;
  presencesPerSec: number;
  usPerChannel: number;
  /** Wall time of every pass, ms (the figures above are of the fastest). */
  passesMs: number[];
}

/** Passes of the restore figure: the fastest counts (the others show how much the machine got in the way). */
const RESTORE_PASSES = 4;

async function restoreBest(store: TroupeStore): Promise<RestoreRun> {
  const runs: RestoreRun[] = [];
  for (let i = 0; i < RESTORE_PASSES; i++) runs.push(await restoreAll(store));
  const best = runs.reduce((a, b) => (b.ms < a.ms ? b : a));
  return { ...best, passesMs: runs.map((r) => r.ms) };
}

/** Reads every channel with documents.list in pages and restores each floor (the runtime's roster). */
async function restoreAll(store: TroupeStore): Promise<RestoreRun> {
  let count = 0;
  let presences = 0;
  let afterKey: string | undefined;
  await gc.start();
  const cpu0 = process.cpuUsage();
  const started = performance.now();
  for (;;) {
    const page = await store.documents.list<ChannelDocument>(CHANNELS, {
      limit: pageSize,
      ...(afterKey !== undefined ? { afterKey } : {}),
    });
    for (const doc of page) {
      const floor = ChannelFloor.restore(doc.value.floor, {
        channelId: doc.key,
        config,
        roster: cast.roster,
      });
      presences += doc.value.floor.presences.length;
      _sink += floor.epoch.length;
    }
    count += page.length;
    if (page.length < pageSize) break;
    afterKey = page[page.length - 1]?.key;
  }
  const ms = performance.now() - started;
  const cpu = process.cpuUsage(cpu0);
  return {
    channels: count,
    presences,
    ms,
    cpuPerWall: (cpu.user + cpu.system) / 1000 / ms,
    gcMs: await gc.stopMs(),
    presencesPerSec: presences / (ms / 1000),
    usPerChannel: (ms * 1000) / count,
    passesMs: [ms],
  };
}

/** Where restore time goes, per channel, in µs: each stage timed on its own, page by page. */
interface RestoreBreakdown {
  /** Channels the breakdown ran over (the first of the store). */
  channels: number;
  /** documents.list: the whole adapter call (read, JSON.parse, documents built). */
  list: number;
  /** SQLite alone: the same query on a read-only connection, rows only (SQLite file only). */
  sqliteRead: number;
  /** JSON.parse of those rows' values (SQLite file only). */
  jsonParse: number;
  /** The fast snapshot reader (ChannelFloor.restore runs it first; the schema only for what it refuses). */
  validate: number;
  /** floorSnapshotSchema.safeParse alone, for reference: what validation costs through the schema. */
  zod: number;
  /** new ChannelFloor with the runtime's roster: roster maps and the mention matcher. */
  constructor: number;
  /** ChannelFloor.restore, all of it. */
  restore: number;
  /** restore - validate - constructor: the machine states, maps and claims put back. */
  machines: number;
}

/** Passes of the breakdown, over its first `breakdownChannels` channels: each stage's fastest counts. */
const BREAKDOWN_PASSES = 3;

async function restoreBreakdown(
  store: TroupeStore,
  sqlitePath: string | undefined,
): Promise<RestoreBreakdown> {
  const raw = sqlitePath ? new Database(sqlitePath, { readonly: true }) : undefined;
  const query = raw?.prepare(
    'SELECT key, value, version, updated_at FROM documents WHERE collection = ? AND key > ? ORDER BY key LIMIT ?',
  );
  type Stages = {
    list: number;
    sqliteRead: number;
    jsonParse: number;
    validate: number;
    zod: number;
    constructor: number;
    restore: number;
  };
  const best: Stages = {
    list: Number.POSITIVE_INFINITY,
    sqliteRead: Number.POSITIVE_INFINITY,
    jsonParse: Number.POSITIVE_INFINITY,
    validate: Number.POSITIVE_INFINITY,
    zod: Number.POSITIVE_INFINITY,
    constructor: Number.POSITIVE_INFINITY,
    restore: Number.POSITIVE_INFINITY,
  };
  let count = 0;
  for (let pass = 0; pass < BREAKDOWN_PASSES; pass++) {
    const ms: Stages = {
      list: 0,
      sqliteRead: 0,
      jsonParse: 0,
      validate: 0,
      zod: 0,
      constructor: 0,
      restore: 0,
    };
    count = 0;
    let afterKey: string | undefined;
    while (count < breakdownChannels) {
      const limit = Math.min(pageSize, breakdownChannels - count);
      let t = performance.now();
      const page = await store.documents.list<ChannelDocument>(CHANNELS, {
        limit,
        ...(afterKey !== undefined ? { afterKey } : {}),
      });
      ms.list += performance.now() - t;
      if (query) {
        t = performance.now();
        const rows = query.all(CHANNELS, afterKey ?? '', limit) as { value: string }[];
        ms.sqliteRead += performance.now() - t;
        t = performance.now();
        for (const row of rows) _sink += (JSON.parse(row.value) as ChannelDocument).spoken.length;
        ms.jsonParse += performance.now() - t;
      }
      t = performance.now();
      for (const doc of page) _sink += parseFloorSnapshotFast(doc.value.floor) ? 1 : 0;
      ms.validate += performance.now() - t;
      t = performance.now();
      for (const doc of page) _sink += floorSnapshotSchema.safeParse(doc.value.floor).success ? 1 : 0;
      ms.zod += performance.now() - t;
      t = performance.now();
      for (const doc of page) {
        const f = doc.value.floor;
        _sink += new ChannelFloor({
          channelId: doc.key,
          config,
          roster: cast.roster,
          at: f.now,
          epoch: f.epoch,
        }).epoch.length;
      }
      ms.constructor += performance.now() - t;
      t = performance.now();
      for (const doc of page)
        _sink += ChannelFloor.restore(doc.value.floor, { channelId: doc.key, config, roster: cast.roster })
          .epoch.length;
      ms.restore += performance.now() - t;
      count += page.length;
      if (page.length < limit) break;
      afterKey = page[page.length - 1]?.key;
    }
    for (const k of Object.keys(best) as (keyof Stages)[]) best[k] = Math.min(best[k], ms[k]);
  }
  raw?.close();
  const us = (x: number) => (x * 1000) / count;
  return {
    channels: count,
    list: us(best.list),
    sqliteRead: query ? us(best.sqliteRead) : Number.NaN,
    jsonParse: query ? us(best.jsonParse) : Number.NaN,
    validate: us(best.validate),
    zod: us(best.zod),
    constructor: us(best.constructor),
    restore: us(best.restore),
    machines: us(best.restore - best.validate - best.constructor),
  };
}

// ---------------------------------------------------------------- 2b. runtime activation

interface Phase {
  channels: number;
  ms: number;
  /** CPU time of the process over wall time: below 1, it waited (for the disk). */
  cpuPerWall: number;
  gcMs: number;
  usPerChannel: number;
  presencesPerSec: number;
}

const phase = (count: number, t: { ms: number; cpuMs: number }, gcMs: number): Phase => ({
  channels: count,
  ms: t.ms,
  cpuPerWall: t.cpuMs / t.ms,
  gcMs,
  usPerChannel: (t.ms * 1000) / count,
  presencesPerSec: (count * PRESENCES_PER_CHANNEL) / (t.ms / 1000),
});

interface Activation {
  /** createRuntime until whenIdle(): it reads every stored wake-up and the outbox. */
  startMs: number;
  /** runtime.open() of every channel at once, awaited (load, validate, restore, resume). */
  open: Phase;
  activeAfterOpen: number;
  /** runtime.stop() with every channel active: each written back (one putMany) with its wake-up. */
  stopAfterOpen: Phase;
  /** One human message per channel (`messageKeys`), awaited with whenIdle(): activation and the turn. */
  message: Phase;
  turnsSent: number;
  stopAfterMessage: Phase;
  errors: number;
  firstError?: string;
}

/** runtime.open() of every channel, then runtime.stop(), on a fresh runtime. */
async function activateByOpen(store: TroupeStore, openKeys: readonly string[]) {
  // The SQLite adapter reads the first page of wake-ups inside createRuntime (its calls run synchronously).
  let created: BenchRuntime | undefined;
  const startMs = await timeMs(async () => {
    created = benchRuntime(store, cast, RUNTIME_AT);
    await created.runtime.whenIdle();
  });
  const r = created as BenchRuntime;
  await gc.start();
  let t = await timeWallCpu(() => openAll(r.runtime, openKeys));
  const open = phase(openKeys.length, t, await gc.stopMs());
  const activeAfterOpen = r.runtime.activeChannels().length;
  await gc.start();
  t = await timeWallCpu(() => r.runtime.stop());
  const stopAfterOpen = phase(openKeys.length, t, await gc.stopMs());
  return { startMs, open, activeAfterOpen, stopAfterOpen, counts: r.counts };
}

/** One message per channel, then runtime.stop(), on a fresh runtime a minute later. */
async function activateByMessage(store: TroupeStore, msgKeys: readonly string[]) {
  const r = benchRuntime(store, cast, RUNTIME_AT + 60_000);
  await r.runtime.whenIdle();
  await gc.start();
  let t = await timeWallCpu(() => messageAll(r.runtime, msgKeys, 'hello'));
  const message = phase(msgKeys.length, t, await gc.stopMs());
  await gc.start();
  t = await timeWallCpu(() => r.runtime.stop());
  const stopAfterMessage = phase(msgKeys.length, t, await gc.stopMs());
  return { message, turnsSent: r.counts.sent, stopAfterMessage, counts: r.counts };
}

async function activation(
  store: TroupeStore,
  openKeys: readonly string[],
  msgKeys: readonly string[],
): Promise<Activation> {
  const { counts: openCounts, ...byOpen } = await activateByOpen(store, openKeys);
  settledHeap();
  const { counts: messageCounts, ...byMessage } = await activateByMessage(store, msgKeys);
  const firstError = openCounts.firstError ?? messageCounts.firstError;
  return {
    ...byOpen,
    ...byMessage,
    errors: openCounts.errors + messageCounts.errors,
    ...(firstError !== undefined ? { firstError } : {}),
  };
}

// ---------------------------------------------------------------- 3. heap

interface HeapFigures {
  /** A runtime over an empty memory store, nothing active: what any runtime costs. */
  emptyRuntimeBytes: number;
  /** The same runtime over the SQLite store holding every channel, nothing active (above the store alone). */
  idleRuntimeBytes: number;
  /** idle - empty, per stored presence: what stored, passive presences cost in this process. */
  bytesPerStoredPresence: number;
  /** The same difference per stored wake-up (channels with a deadline), which is what the runtime keeps. */
  bytesPerWakeup: number;
  storedPresences: number;
  wakeups: number;
  /** With `activeChannels` channels active (a message each), above the idle runtime. */
  activeChannels: number;
  activePresences: number;
  activeBytes: number;
  bytesPerActiveChannel: number;
  bytesPerActivePresence: number;
  turnsSent: number;
}

/** Rounds of the idle figures: the first may still compile code or recompile flushed bytecode. */
const IDLE_ROUNDS = 3;
const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[xs.length >> 1] as number;

/** Retained heap of a runtime over `store` once started (whenIdle), nothing active; median of rounds. */
async function idleRuntimeHeap(makeStore: () => TroupeStore): Promise<number> {
  const rounds: number[] = [];
  for (let i = 0; i < IDLE_ROUNDS; i++) {
    const base = settledHeap();
    const r = benchRuntime(makeStore(), cast, RUNTIME_AT);
    await r.runtime.whenIdle();
    rounds.push(settledHeap() - base);
    await r.runtime.stop();
  }
  return median(rounds);
}

async function measureHeap(store: TroupeStore, wakeups: number): Promise<HeapFigures> {
  const empty = createMemoryStore();
  const emptyRuntimeBytes = await idleRuntimeHeap(() => empty);
  const idleRuntimeBytes = await idleRuntimeHeap(() => store);

  const base = settledHeap();
  const r = benchRuntime(store, cast, RUNTIME_AT);
  await r.runtime.whenIdle();
  const idle = settledHeap() - base;
  await messageAll(r.runtime, activeKeys, 'heap');
  const active = settledHeap() - base;
  const activeCount = r.runtime.activeChannels().length;
  const turnsSent = r.counts.sent;
  await r.runtime.stop();
  const activePresences = activeCount * PRESENCES_PER_CHANNEL;
  return {
    emptyRuntimeBytes,
    idleRuntimeBytes,
    bytesPerStoredPresence: (idleRuntimeBytes - emptyRuntimeBytes) / presencesTotal,
    bytesPerWakeup: (idleRuntimeBytes - emptyRuntimeBytes) / wakeups,
    storedPresences: presencesTotal,
    wakeups,
    activeChannels: activeCount,
    activePresences,
    activeBytes: active - idle,
    bytesPerActiveChannel: (active - idle) / activeCount,
    bytesPerActivePresence: (active - idle) / activePresences,
    turnsSent,
  };
}

// ---------------------------------------------------------------- warm-up

/** The same paths, untimed, on a scratch store of `warmChannels` channels, so the timed runs start warm. */
async function warmUp(store: TroupeStore, sqlitePath: string | undefined): Promise<void> {
  await populate(store, warmChannels);
  const warmKeys = keys.slice(0, warmChannels);
  await restoreAll(store);
  await restoreBreakdown(store, sqlitePath);
  const r = benchRuntime(store, cast, RUNTIME_AT);
  await openAll(r.runtime, warmKeys);
  await r.runtime.stop();
  const m = benchRuntime(store, cast, RUNTIME_AT + 60_000);
  await messageAll(m.runtime, warmKeys.slice(0, Math.ceil(warmChannels / 5)), 'warm');
  await m.runtime.stop();
}

// ---------------------------------------------------------------- run

const fileSize = (path: string) => {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
};

const sampleDoc = storedChannel(0, cast, config, seed, 'claimed', START_AT).document;
const sampleBytes = Buffer.byteLength(JSON.stringify(sampleDoc));
const sampleFloorBytes = Buffer.byteLength(JSON.stringify(sampleDoc.floor));
const samplePresenceBytes = Buffer.byteLength(JSON.stringify(sampleDoc.floor.presences[0]));

log(
  `store bench: ${int(channels)} channels x ${PRESENCES_PER_CHANNEL} presences, ${int(opsCount)} calls per operation, ` +
    `cast of ${castSize}${quick ? ' (quick)' : ''}; files in ${dir}`,
);
if (!canMeasureHeap) log('  (no --expose-gc: heap figures are skipped)');

// 1. operations
log('1. operations: SQLite');
const opsPath = join(dir, DB_FILES[0] as string);
const opsSqlite = await openSqliteStore({ path: opsPath });
const operationsSqlite = await measureOperations(opsSqlite, sampleDoc);
await opsSqlite.close();
log('   memory');
const opsMemory = createMemoryStore();
const operationsMemory = await measureOperations(opsMemory, sampleDoc);
await opsMemory.close();

// 2 and 3 on SQLite
log('2. warming up on scratch stores');
{
  const warmPath = join(dir, DB_FILES[1] as string);
  const warm = await openSqliteStore({ path: warmPath });
  await warmUp(warm, warmPath);
  await warm.close();
  await warmUp(createMemoryStore(), undefined);
}
settledHeap();
log(`   populating SQLite with ${int(channels)} channels`);
const dbPath = join(dir, DB_FILES[2] as string);
const sqlite = await openSqliteStore({ path: dbPath });
const populationSqlite = await populate(sqlite, channels);
const sqliteBytes = { file: fileSize(dbPath), wal: fileSize(`${dbPath}-wal`) };
log(`   written in ${fixed(populationSqlite.writeMs / 1000, 2)} s; restoring`);
const restoreSqlite = await restoreBest(sqlite);
log(`   ${int(restoreSqlite.presencesPerSec)} presences/s; breakdown`);
const breakdownSqlite = await restoreBreakdown(sqlite, dbPath);
log('3. heap');
const heap = canMeasureHeap ? await measureHeap(sqlite, populationSqlite.wakeups) : null;
log('   runtime activation: open every channel');
const activationSqlite = await activation(sqlite, keys, messageKeys);
log(
  `   open ${fixed(activationSqlite.open.usPerChannel)} µs/channel, message ${fixed(activationSqlite.message.usPerChannel)} µs/channel`,
);
await sqlite.close();

// 2 on memory
settledHeap();
log(`   populating the memory store with ${int(channels)} channels`);
const memory = createMemoryStore();
const memoryBase = settledHeap();
const populationMemory = await populate(memory, channels);
const memoryStoreBytes = settledHeap() - memoryBase;
const restoreMemory = await restoreBest(memory);
log(`   ${int(restoreMemory.presencesPerSec)} presences/s; breakdown`);
const breakdownMemory = await restoreBreakdown(memory, undefined);
log('   runtime activation');
const activationMemory = await activation(memory, keys, messageKeys);
await memory.close();
gc.dispose();
if (ownDir) rmSync(dir, { recursive: true, force: true });
const elapsedS = (performance.now() - t0) / 1000;
log(`   done in ${fixed(elapsedS)} s`);

// ---------------------------------------------------------------- output

const cpus = os.cpus();
const environment = {
  loadAverage: { atStart: loadAtStart, atEnd: os.loadavg() },
  node: process.version,
  v8: process.versions.v8,
  execArgv: process.execArgv.filter((a) => !a.startsWith('--import') && a !== 'tsx' && !a.includes('/tsx/')),
  cpu: cpus[0]?.model ?? 'unknown',
  cores: cpus.length,
  seed,
  elapsedSeconds: elapsedS,
};
const docInfo = {
  bytes: sampleBytes,
  floorBytes: sampleFloorBytes,
  presenceBytes: samplePresenceBytes,
  presences: sampleDoc.floor.presences.length,
  threads: sampleDoc.floor.threads.length,
  inFlight: sampleDoc.floor.inFlight.length,
};

if (args.json) {
  process.stdout.write(
    `${JSON.stringify(
      {
        environment,
        options: {
          channels,
          presences: presencesTotal,
          opsCount,
          batch,
          pageSize,
          messageChannels,
          activeChannels,
          cast: castSize,
          quick,
          persistence: PERSISTENCE,
        },
        document: docInfo,
        operations: { sqlite: operationsSqlite, memory: operationsMemory },
        population: {
          sqlite: { ...populationSqlite, fileBytes: sqliteBytes.file, walBytes: sqliteBytes.wal },
          memory: { ...populationMemory, heapBytes: memoryStoreBytes },
        },
        restore: {
          sqlite: { ...restoreSqlite, breakdownUsPerChannel: breakdownSqlite },
          memory: { ...restoreMemory, breakdownUsPerChannel: breakdownMemory },
        },
        activation: { sqlite: activationSqlite, memory: activationMemory },
        heap,
      },
      null,
      2,
    )}\n`,
  );
} else {
  const out: string[] = [];
  const p = (s = '') => out.push(s);
  const mb = (n: number) => `${fixed(n / 1_048_576, 1)} MB`;
  const s1 = (ms: number) => `${fixed(ms / 1000, 2)} s`;
  const gcShare = (x: { ms: number; gcMs: number }) => pct(x.gcMs / x.ms, 0);

  p(
    'Troupe store benchmark: the SQLite adapter (a temporary file, WAL, synchronous=NORMAL) and the memory adapter,',
  );
  p(
    'with the values the runtime writes; restoring persisted channel floors directly and through the runtime',
  );
  p(`node ${environment.node} (V8 ${environment.v8}), flags: ${environment.execArgv.join(' ') || '(none)'}`);
  p(
    `${environment.cpu}, ${environment.cores} cores; all work on the main thread; seed ${seed}; took ${fixed(elapsedS)} s; ` +
      `load average ${fixed(loadAtStart[0] ?? Number.NaN, 2)} at the start, ${fixed(environment.loadAverage.atEnd[0] ?? Number.NaN, 2)} at the end`,
  );
  p(
    `Channel document (a ChannelFloor with ${docInfo.presences} presences, ${docInfo.threads} mention thread, ${docInfo.inFlight} turn claimed, ` +
      `and its spoken counts): ${int(docInfo.bytes)} B of JSON; the floor ${int(docInfo.floorBytes)} B, one presence ${int(docInfo.presenceBytes)} B.`,
  );
  p(
    `Stored channels: ${int(channels)} x ${PRESENCES_PER_CHANNEL} presences = ${int(presencesTotal)} presences, real floor snapshots with varied ids, ` +
      `casts and times; 1 in 4 with an open thread (${int(populationSqlite.wakeups)} wake-ups), the others passivated; ` +
      `${int(populationSqlite.bytes / channels)} B per document on average, ${mb(populationSqlite.bytes)} of JSON. ` +
      `The runtime knows ${castSize} avatars (every floor's roster).`,
  );
  p();

  p('1. Store operations, one call at a time, each awaited (ops/s of wall time; latency per call)');
  {
    const rows = operationsOn(createMemoryStore(), sampleDoc).map((op) => {
      const s = operationsSqlite[op.name] as OpFigure;
      const m = operationsMemory[op.name] as OpFigure;
      const batchNote = op.itemsPerCall > 1;
      return [
        op.label,
        int(s.opsPerSec),
        batchNote ? int(s.itemsPerSec) : '',
        fixed(s.latency.p50),
        fixed(s.latency.p99),
        fixed(s.cpuPerWall, 2),
        int(m.opsPerSec),
        batchNote ? int(m.itemsPerSec) : '',
        fixed(m.latency.p50),
        fixed(m.latency.p99),
        fixed(m.cpuPerWall, 2),
        ratio(m.opsPerSec, s.opsPerSec),
      ];
    });
    p(
      table(
        [
          'operation',
          'SQLite ops/s',
          'docs/s',
          'p50 µs',
          'p99 µs',
          'CPU/wall',
          'memory ops/s',
          'docs/s',
          'p50 µs',
          'p99 µs',
          'CPU/wall',
          'memory/SQLite',
        ],
        rows,
      ),
    );
  }
  p();

  p(`2. Restoring ${int(presencesTotal)} persisted presences (${int(channels)} channels)`);
  p(
    `Written with putMany, ${batch} per call (CAS, as the runtime flushes) plus the wake-ups: SQLite ${int(populationSqlite.docsPerSec)} docs/s ` +
      `(${s1(populationSqlite.writeMs)}; file ${mb(sqliteBytes.file)} + WAL ${mb(sqliteBytes.wal)}), memory ${int(populationMemory.docsPerSec)} docs/s ` +
      `(${s1(populationMemory.writeMs)}; ${mb(memoryStoreBytes)} of heap, ${int(memoryStoreBytes / presencesTotal)} B per stored presence).`,
  );
  p(
    `(a) documents.list in pages of ${int(pageSize)}, ChannelFloor.restore of each (roster: the runtime's ${castSize} avatars); ` +
      `the fastest of ${RESTORE_PASSES} passes:`,
  );
  p(
    table(
      ['', 'SQLite', 'memory'],
      [
        ['channels restored', int(restoreSqlite.channels), int(restoreMemory.channels)],
        ['presences restored', int(restoreSqlite.presences), int(restoreMemory.presences)],
        ['total', s1(restoreSqlite.ms), s1(restoreMemory.ms)],
        ['presences/s', int(restoreSqlite.presencesPerSec), int(restoreMemory.presencesPerSec)],
        ['µs per channel', fixed(restoreSqlite.usPerChannel), fixed(restoreMemory.usPerChannel)],
        ['of which GC', gcShare(restoreSqlite), gcShare(restoreMemory)],
        ['CPU/wall', fixed(restoreSqlite.cpuPerWall, 2), fixed(restoreMemory.cpuPerWall, 2)],
        [
          'every pass',
          restoreSqlite.passesMs.map((x) => s1(x)).join(', '),
          restoreMemory.passesMs.map((x) => s1(x)).join(', '),
        ],
      ],
    ),
  );
  p(
    `Where the time goes, µs per channel: each stage timed in its own loop over the same pages, over the first ` +
      `${int(breakdownSqlite.channels)} channels; the fastest of ${BREAKDOWN_PASSES} passes per stage:`,
  );
  {
    const b = (x: RestoreBreakdown, f: (r: RestoreBreakdown) => number) => fixed(f(x), 1);
    const share = (x: RestoreBreakdown, f: (r: RestoreBreakdown) => number) =>
      pct(f(x) / (x.list + x.restore), 0);
    const rows: [string, (r: RestoreBreakdown) => number][] = [
      ['documents.list page (all of it)', (r) => r.list],
      ['  SQLite rows alone (same query)', (r) => r.sqliteRead],
      ['  JSON.parse of the values', (r) => r.jsonParse],
      ['ChannelFloor.restore (all of it)', (r) => r.restore],
      ['  validation: the fast snapshot reader', (r) => r.validate],
      [`  new ChannelFloor: roster maps + mention matcher (${castSize} avatars)`, (r) => r.constructor],
      ['  machine states, maps, claims (the rest)', (r) => r.machines],
      ['(for reference, not part of restore) zod floorSnapshotSchema.safeParse', (r) => r.zod],
    ];
    p(
      table(
        ['', 'SQLite µs', 'share', 'memory µs', 'share'],
        rows.map(([label, f]) => [
          label,
          b(breakdownSqlite, f),
          share(breakdownSqlite, f),
          b(breakdownMemory, f),
          share(breakdownMemory, f),
        ]),
      ),
    );
  }
  p(
    `(b) Through the runtime: createRuntime on the store (SimulatedClock, scripted model, a transport that keeps nothing):`,
  );
  {
    const a = activationSqlite;
    const m = activationMemory;
    p(
      table(
        ['', 'SQLite', 'memory'],
        [
          [
            `start: createRuntime + whenIdle() (reads ${int(populationSqlite.wakeups)} wake-ups, the outbox)`,
            `${fixed(a.startMs)} ms`,
            `${fixed(m.startMs)} ms`,
          ],
          [`open() every channel (${int(a.open.channels)}), awaited`, s1(a.open.ms), s1(m.open.ms)],
          ['  µs per activated channel', fixed(a.open.usPerChannel), fixed(m.open.usPerChannel)],
          ['  presences/s', int(a.open.presencesPerSec), int(m.open.presencesPerSec)],
          ['  of which GC', gcShare(a.open), gcShare(m.open)],
          ['  CPU/wall', fixed(a.open.cpuPerWall, 2), fixed(m.open.cpuPerWall, 2)],
          ['  channels active afterwards', int(a.activeAfterOpen), int(m.activeAfterOpen)],
          ['stop(): writes every active channel back', s1(a.stopAfterOpen.ms), s1(m.stopAfterOpen.ms)],
          ['  µs per channel', fixed(a.stopAfterOpen.usPerChannel), fixed(m.stopAfterOpen.usPerChannel)],
          ['  CPU/wall', fixed(a.stopAfterOpen.cpuPerWall, 2), fixed(m.stopAfterOpen.cpuPerWall, 2)],
          [
            `one human message per channel (${int(a.message.channels)} of them), whenIdle()`,
            s1(a.message.ms),
            s1(m.message.ms),
          ],
          [
            '  µs per activated channel (load + decision + turn)',
            fixed(a.message.usPerChannel),
            fixed(m.message.usPerChannel),
          ],
          ['  turns sent', int(a.turnsSent), int(m.turnsSent)],
          ['  of which GC', gcShare(a.message), gcShare(m.message)],
          ['  CPU/wall', fixed(a.message.cpuPerWall, 2), fixed(m.message.cpuPerWall, 2)],
          ['stop() after the messages', s1(a.stopAfterMessage.ms), s1(m.stopAfterMessage.ms)],
          ['errors reported', int(a.errors), int(m.errors)],
        ],
      ),
    );
    for (const [name, x] of [
      ['SQLite', a],
      ['memory', m],
    ] as const)
      if (x.firstError) p(`  ${name}: first error: ${x.firstError}`);
  }
  p();

  if (heap) {
    p(
      `3. Heap with ${int(heap.storedPresences)} presences stored in SQLite and ${int(heap.activePresences)} active (${int(heap.activeChannels)} channels, a message each)`,
    );
    p(
      table(
        ['', 'retained heap'],
        [
          ['runtime over an empty memory store, nothing active', mb(heap.emptyRuntimeBytes)],
          [`runtime over the SQLite store, nothing active`, mb(heap.idleRuntimeBytes)],
          ['  per stored presence (minus the empty runtime)', `${fixed(heap.bytesPerStoredPresence, 1)} B`],
          [`  per stored wake-up (${int(heap.wakeups)} of them)`, `${int(heap.bytesPerWakeup)} B`],
          [`${int(heap.activeChannels)} channels active (above nothing active)`, mb(heap.activeBytes)],
          ['  per active channel', `${int(heap.bytesPerActiveChannel)} B`],
          ['  per active presence', `${int(heap.bytesPerActivePresence)} B`],
          ['turns sent by the activating messages', int(heap.turnsSent)],
        ],
      ),
    );
    p(
      `Stored, passive presences cost ${fixed(heap.bytesPerStoredPresence, 1)} B each in this process: a runtime keeps nothing for a passive ` +
        `channel but, for the ${int(heap.wakeups)} with a deadline, the wake-up it scheduled on start (${int(heap.bytesPerWakeup)} B each: scheduler ` +
        `heap entry, its map entries and the key). An active presence costs ${int(heap.bytesPerActivePresence)} B. In the memory adapter a stored presence ` +
        `is ${int(memoryStoreBytes / presencesTotal)} B of heap (its JSON text).`,
    );
    p();
  }

  p('Summary');
  {
    const rows: string[][] = [];
    const row = (label: string, s: string, m: string) => rows.push([label, s, m]);
    row(
      'documents.put ops/s',
      int(operationsSqlite.put?.opsPerSec ?? Number.NaN),
      int(operationsMemory.put?.opsPerSec ?? Number.NaN),
    );
    row(
      'documents.put CAS ops/s',
      int(operationsSqlite.putCas?.opsPerSec ?? Number.NaN),
      int(operationsMemory.putCas?.opsPerSec ?? Number.NaN),
    );
    row(
      `putMany docs/s (${batch} per call)`,
      int(operationsSqlite.putMany?.itemsPerSec ?? Number.NaN),
      int(operationsMemory.putMany?.itemsPerSec ?? Number.NaN),
    );
    row(
      'documents.get ops/s',
      int(operationsSqlite.get?.opsPerSec ?? Number.NaN),
      int(operationsMemory.get?.opsPerSec ?? Number.NaN),
    );
    row(
      'outbox record+settle /s',
      int(operationsSqlite.outbox?.opsPerSec ?? Number.NaN),
      int(operationsMemory.outbox?.opsPerSec ?? Number.NaN),
    );
    row(
      'events.append ops/s',
      int(operationsSqlite.append?.opsPerSec ?? Number.NaN),
      int(operationsMemory.append?.opsPerSec ?? Number.NaN),
    );
    row(
      'events.increment ops/s',
      int(operationsSqlite.increment?.opsPerSec ?? Number.NaN),
      int(operationsMemory.increment?.opsPerSec ?? Number.NaN),
    );
    row(
      'memory.put ops/s',
      int(operationsSqlite.memoryPut?.opsPerSec ?? Number.NaN),
      int(operationsMemory.memoryPut?.opsPerSec ?? Number.NaN),
    );
    row(
      `restore ${int(presencesTotal)} presences (list + restore)`,
      s1(restoreSqlite.ms),
      s1(restoreMemory.ms),
    );
    row('  presences/s', int(restoreSqlite.presencesPerSec), int(restoreMemory.presencesPerSec));
    row(
      'runtime open(): µs per activated channel',
      fixed(activationSqlite.open.usPerChannel),
      fixed(activationMemory.open.usPerChannel),
    );
    row(
      '  presences/s',
      int(activationSqlite.open.presencesPerSec),
      int(activationMemory.open.presencesPerSec),
    );
    row(
      'runtime, by a message: µs per channel',
      fixed(activationSqlite.message.usPerChannel),
      fixed(activationMemory.message.usPerChannel),
    );
    if (heap) {
      row(
        'heap per stored, passive presence',
        `${fixed(heap.bytesPerStoredPresence, 1)} B`,
        `${int(memoryStoreBytes / presencesTotal)} B`,
      );
      row('heap per active presence', `${int(heap.bytesPerActivePresence)} B`, '');
    }
    p(table(['', 'SQLite', 'memory'], rows));
  }

  p();
  p('What the figures mean:');
  for (const line of [
    'ops/s: calls per second of wall time, one at a time, each awaited (the SQLite driver is synchronous, so a call',
    '  is its statement plus the promise around it). A putMany call writes its documents in one transaction;',
    '  outbox record + settle counts the pair as one. Every write is checked and encoded to JSON (encodeJson) first.',
    `  ${WARM_CALLS} untimed calls (documents, for putMany) precede every figure.`,
    'CPU/wall: process CPU time (all threads) over wall time. Below 1 the work waited: for the disk (WAL',
    "  checkpoints fsync with synchronous=NORMAL) or, where the memory adapter's figure is below 1 too, for a CPU",
    '  that other processes had.',
    '  Other processes on the machine slow every figure down: see the load average above.',
    `(a) restore: ${RESTORE_PASSES} passes after a warm-up on a scratch store; the fastest is shown, all are listed.`,
    '  The breakdown times each stage in its own loop over the same page; the SQLite rows and JSON.parse lines use',
    '  a read-only connection of our own to split the adapter call; "machine states" is restore - validation -',
    '  constructor (a difference of timings, so it carries their noise). Restore validates a snapshot with a fast reader',
    "  that gives the schema's output or gives up (then the schema decides and names what is wrong); the zod line",
    '  times the schema alone on the same snapshots, for comparison.',
    '(b) open(): every channel activated at once through the runtime (ChannelPersistence.load: documents.get; then',
    '  ChannelFloor.restore, which validates the floor; the actor armed for its deadlines),',
    '  all awaited; every channel stays active, so the heap grows through the phase and GC is part of it.',
    '  stop() then writes each active channel back with compare-and-set in one putMany, and its wake-up.',
    `  message: a fresh runtime, one unaddressed human message per channel to ${int(messageChannels)} channels spread over the`,
    '  store; whenIdle() awaits the load, the decision, the turn it sets off (scripted model, flush before the',
    '  send, outbox, transport, settle) and the history writes.',
    `Every floor gets the runtime's whole cast as its roster (${castSize} avatars, --cast): its constructor builds a mention`,
    '  matcher over all of them, so restore time and the heap of an active channel grow with the cast.',
    "  Troupe's code runs from dist/ as users run it (tsc's output: no tsx, so no __name wrapper around the closures",
    '  createMentionMatcher makes per name).',
    '3. heap: used heap after full collections (--expose-gc), as bench/support/heap.ts does. Nothing active:',
    '  createRuntime and whenIdle() (it schedules the stored wake-ups). Active: after a message to each channel',
    '  and whenIdle(), before the flush timer fires (the snapshots waiting to be written are counted).',
  ])
    p(`  ${line}`);
  process.stdout.write(`${out.join('\n')}\n`);
}
if (!args.json)
  printSummary('store', [
    {
      name: 'documents.put, SQLite',
      value: operationsSqlite.put?.opsPerSec ?? null,
      unit: 'ops/s',
      ratio:
        (operationsSqlite.put?.opsPerSec ?? Number.NaN) / (operationsMemory.put?.opsPerSec ?? Number.NaN),
      reference: 'the memory store',
    },
    {
      name: `restore ${int(presencesTotal)} presences, SQLite (list + restore)`,
      value: restoreSqlite.ms / 1000,
      unit: 's',
      ratio: restoreSqlite.ms / restoreMemory.ms,
      reference: 'the memory store',
    },
    {
      name: 'runtime open(), SQLite, per activated channel',
      value: activationSqlite.open.usPerChannel,
      unit: 'µs',
      ratio: activationSqlite.open.usPerChannel / activationMemory.open.usPerChannel,
      reference: 'the memory store',
    },
  ]);
