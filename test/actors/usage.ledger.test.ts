import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SimulatedClock } from '../../src/actors/clock.js';
import { createUsageLedger } from '../../src/actors/usage/storedUsageLedger.js';
import { createMemoryStore } from '../../src/adapters/store/memory/memoryStore.js';
import { openMongoStore } from '../../src/adapters/store/mongo/mongoStore.js';
import { openSqliteStore } from '../../src/adapters/store/sqlite/sqliteStore.js';
import { withOperatorPrices } from '../../src/config/modelPrices.js';
import type { DocumentStore, TroupeStore } from '../../src/ports/store.js';
import { TroupeError } from '../../src/ports/troupeError.js';
import type { ModelCallUsage } from '../../src/ports/usage.js';
import { type FakeMongoServer, startFakeMongoServer } from '../support/fakeMongoServer.js';
import { capturingLogger } from '../support/llmFixtures.js';

const dir = mkdtempSync(join(tmpdir(), 'troupe-usage-'));
let mongo: FakeMongoServer | undefined;
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await mongo?.close();
});

/** 2026-11-28 13:20 UTC. */
const T = Date.UTC(2026, 10, 28, 13, 20);
const MIDNIGHT = Date.UTC(2026, 10, 29);
const prices = withOperatorPrices({ 'openai:gpt-test': { input: 1, output: 4 } });

/** Writes no sooner than the test's own flush(): each test decides when the store is written. */
const manual = () => undefined;

function call(overrides: Partial<ModelCallUsage> = {}): ModelCallUsage {
  return {
    at: T,
    model: 'openai:gpt-test',
    spender: { kind: 'avatar', id: 'ada' },
    scope: 'discord:123',
    purpose: 'turn',
    inputTokens: 1_000,
    outputTokens: 250,
    characters: 40,
    ...overrides,
  };
}

/** Puts counted, and a switch that makes every read and write fail as an unreachable store would. */
function instrumented(store: DocumentStore) {
  const state = { puts: 0, down: false };
  const unavailable = () =>
    Promise.reject(new TroupeError('TROUPE_STORE_UNAVAILABLE', 'The store is down.', { retryable: true }));
  const documents: DocumentStore = {
    ...store,
    get: (collection, key) => (state.down ? unavailable() : store.get(collection, key)),
    put: (collection, key, value, options) => {
      if (state.down) return unavailable();
      state.puts += 1;
      return store.put(collection, key, value, options);
    },
    list: (collection, options) => (state.down ? unavailable() : store.list(collection, options)),
  };
  return { documents, state };
}

const stores: [string, () => Promise<TroupeStore>][] = [
  ['memory', async () => createMemoryStore()],
  ['sqlite', () => openSqliteStore({ path: join(dir, `usage-${randomUUID()}.db`) })],
  [
    'mongodb (fake wire server)',
    async () => {
      mongo ??= await startFakeMongoServer();
      return openMongoStore({ uri: mongo.uri, database: `usage_${randomUUID().slice(0, 8)}` });
    },
  ],
];

describe.each(stores)('usage ledger on the %s store', (_name, open) => {
  it('sums calls per hourly bucket, stores them under hour-first keys and reports them grouped', async () => {
    const store = await open();
    const ledger = createUsageLedger({ store: store.documents, prices, scheduleFlush: manual });
    ledger.record(call());
    ledger.record(call({ inputTokens: 500, outputTokens: 100, characters: 10 }));
    ledger.record(call({ spender: { kind: 'avatar', id: 'bo' }, purpose: 'greeting' }));
    ledger.record(call({ spender: { kind: 'email' }, scope: 'mail:sam@example.com', purpose: 'triage' }));
    await ledger.flush();

    const docs = await store.documents.list('usage');
    expect(docs.map((d) => d.key)).toEqual([
      '2026-11-28T13|avatar:ada|discord:123|turn|openai:gpt-test',
      '2026-11-28T13|avatar:bo|discord:123|greeting|openai:gpt-test',
      '2026-11-28T13|email|mail:sam@example.com|triage|openai:gpt-test',
    ]);
    expect(docs[0]?.value).toMatchObject({ calls: 2, inputTokens: 1_500, outputTokens: 350, characters: 50 });
    // 1,500 in at 1 USD and 350 out at 4 USD per million.
    expect((docs[0]?.value as { costUsd?: number } | undefined)?.costUsd).toBeCloseTo(0.0029, 12);

    const byAvatar = await ledger.report({ by: 'avatar', since: T - 3_600_000, until: T + 1 });
    expect(byAvatar.map((r) => [r.key, r.calls, r.inputTokens, r.outputTokens])).toEqual([
      ['ada', 2, 1_500, 350],
      ['bo', 1, 1_000, 250],
      ['email', 1, 1_000, 250],
    ]);
    const byPurpose = await ledger.report({ by: 'purpose', since: T, until: T + 1 });
    expect(byPurpose.map((r) => r.key).sort()).toEqual(['greeting', 'triage', 'turn']);
    const byChannel = await ledger.report({ by: 'channel', since: T, until: T + 1 });
    expect(byChannel.map((r) => [r.key, r.calls])).toEqual([
      ['discord:123', 3],
      ['mail:sam@example.com', 1],
    ]);
    // An hour outside [since, until) is left out.
    expect(await ledger.report({ by: 'model', since: T + 3_600_000, until: T + 7_200_000 })).toEqual([]);
    await store.close();
  });

  it('reads a stored day back after a restart', async () => {
    const store = await open();
    const first = createUsageLedger({ store: store.documents, prices, scheduleFlush: manual });
    first.record(call());
    first.record(call({ spender: { kind: 'email' }, purpose: 'agent-step' }));
    await first.flush();

    const second = createUsageLedger({ store: store.documents, prices, scheduleFlush: manual });
    expect(second.dayTotals(T, 'ada').calls).toBe(0);
    await second.load(T);
    expect(second.dayTotals(T, 'ada')).toMatchObject({ calls: 1, inputTokens: 1_000, outputTokens: 250 });
    expect(second.dayTotals(T)).toMatchObject({ calls: 2, inputTokens: 2_000 });
    await store.close();
  });
});

describe('usage ledger: what a call counts', () => {
  it('counts a call without usage as such, a call without a price as unpriced, the offline model at zero cost', async () => {
    const ledger = createUsageLedger({ store: createMemoryStore().documents, prices, scheduleFlush: manual });
    ledger.record(call({ inputTokens: undefined, outputTokens: undefined }));
    ledger.record(call({ model: 'openai-compatible:llama3.2' }));
    ledger.record(
      call({ model: 'offline:scripted', inputTokens: undefined, outputTokens: undefined, characters: 77 }),
    );
    expect(ledger.dayTotals(T, 'ada')).toEqual({
      calls: 3,
      callsWithoutUsage: 1,
      inputTokens: 1_000,
      outputTokens: 250,
      characters: 40 + 40 + 77,
      costUsd: 0,
      unpricedCalls: 1,
    });
    const byModel = await ledger.report({ by: 'model', since: T, until: T + 1 });
    expect(byModel.find((r) => r.key === 'offline:scripted')).toMatchObject({
      calls: 1,
      callsWithoutUsage: 0,
      characters: 77,
      costUsd: 0,
    });
  });

  it('day totals count at once, before anything is stored, per avatar and in total', () => {
    const ledger = createUsageLedger({ store: createMemoryStore().documents, prices, scheduleFlush: manual });
    ledger.record(call());
    ledger.record(call({ spender: { kind: 'email' } }));
    expect(ledger.dayTotals(T, 'ada').inputTokens).toBe(1_000);
    expect(ledger.dayTotals(T, 'bo').calls).toBe(0);
    expect(ledger.dayTotals(T).inputTokens).toBe(2_000);
    expect(ledger.dayTotals(T).costUsd).toBeCloseTo(0.004, 12);
  });

  it('writes once per bucket per flush however many calls it holds, soon after the calls', async () => {
    const { documents, state } = instrumented(createMemoryStore().documents);
    const flushes: (() => void)[] = [];
    const ledger = createUsageLedger({ store: documents, prices, scheduleFlush: (f) => flushes.push(f) });
    for (let i = 0; i < 50; i++) ledger.record(call({ at: T + i }));
    ledger.record(call({ purpose: 'follow-up' }));
    expect(flushes).toHaveLength(1); // one flush scheduled for the lot
    flushes[0]?.();
    await ledger.flush();
    expect(state.puts).toBe(2);
    const docs = await documents.list<{ calls: number; purpose: string }>('usage');
    expect(docs.map((d) => [d.value.purpose, d.value.calls])).toEqual([
      ['follow-up', 1],
      ['turn', 50],
    ]);
  });

  it('escapes the separator inside a key part', async () => {
    const store = createMemoryStore();
    const ledger = createUsageLedger({ store: store.documents, prices, scheduleFlush: manual });
    ledger.record(call({ scope: 'test:a|b%c' }));
    ledger.record(call({ spender: { kind: 'avatar', id: 'x|y' }, model: 'm|n' }));
    await ledger.flush();
    const [doc, other] = await store.documents.list('usage');
    expect(doc?.key).toBe('2026-11-28T13|avatar:ada|test:a%7Cb%25c|turn|openai:gpt-test');
    expect(doc?.value).toMatchObject({ scope: 'test:a|b%c' });
    expect(other?.key).toBe('2026-11-28T13|avatar:x%7Cy|discord:123|turn|m%7Cn');
    expect(ledger.dayTotals(T, 'x|y').calls).toBe(1);
    const rows = await ledger.report({ by: 'avatar', since: T, until: T + 1 });
    expect(rows.map((r) => r.key)).toEqual(['ada', 'x|y']);
  });
});

describe('usage ledger: a store that fails', () => {
  it('keeps the calls in memory, logs the failure and stores them once the store is back', async () => {
    const { documents, state } = instrumented(createMemoryStore().documents);
    const { logger, lines } = capturingLogger();
    const ledger = createUsageLedger({ store: documents, prices, logger, scheduleFlush: manual });
    state.down = true;
    ledger.record(call());
    await expect(ledger.flush()).resolves.toBeUndefined();
    ledger.record(call());
    await ledger.flush();
    expect(ledger.dayTotals(T, 'ada').calls).toBe(2);
    expect(lines.join('\n')).toContain('usage not stored yet');
    expect(lines.join('\n')).toContain('TROUPE_STORE_UNAVAILABLE');

    state.down = false;
    ledger.record(call({ purpose: 'greeting' }));
    await ledger.flush();
    const docs = await documents.list<{ calls: number; purpose: string }>('usage');
    expect(docs.map((d) => [d.value.purpose, d.value.calls])).toEqual([
      ['greeting', 1],
      ['turn', 2],
    ]);
    // Written once: nothing left pending counts twice in a report.
    const rows = await ledger.report({ by: 'purpose', since: T, until: T + 1 });
    expect(rows.map((r) => [r.key, r.calls])).toEqual([
      ['turn', 2],
      ['greeting', 1],
    ]);
  });

  it('a report counts calls not stored yet; a load while the store is down fails and keeps the day', async () => {
    const { documents, state } = instrumented(createMemoryStore().documents);
    const ledger = createUsageLedger({ store: documents, prices, scheduleFlush: manual });
    ledger.record(call());
    await ledger.flush();
    state.down = true;
    ledger.record(call());
    await expect(ledger.load(T)).rejects.toMatchObject({ code: 'TROUPE_STORE_UNAVAILABLE' });
    expect(ledger.dayTotals(T, 'ada').calls).toBe(2);
    state.down = false;
    await ledger.load(T);
    expect(ledger.dayTotals(T, 'ada').calls).toBe(2);
    expect((await ledger.report({ by: 'avatar', since: T, until: T + 1 }))[0]?.calls).toBe(2);
  });
});

describe('usage ledger: two processes on one store', () => {
  it('both are counted: a write that loses the compare-and-set reads again and adds', async () => {
    const store = createMemoryStore();
    const a = createUsageLedger({ store: store.documents, prices, scheduleFlush: manual });
    const b = createUsageLedger({ store: store.documents, prices, scheduleFlush: manual });
    for (let round = 0; round < 3; round++) {
      a.record(call());
      b.record(call());
      b.record(call({ spender: { kind: 'avatar', id: 'bo' } }));
      await Promise.all([a.flush(), b.flush()]);
    }
    const rows = await a.report({ by: 'avatar', since: T, until: T + 1 });
    expect(rows.map((r) => [r.key, r.calls, r.inputTokens])).toEqual([
      ['ada', 6, 6_000],
      ['bo', 3, 3_000],
    ]);
    // Each process's day totals hold its own calls until it loads the day.
    expect(a.dayTotals(T, 'ada').calls).toBe(3);
    await a.load(T);
    expect(a.dayTotals(T, 'ada').calls).toBe(6);
    expect(a.dayTotals(T).calls).toBe(9);
  });

  it('a call recorded while the day is loaded counts once', async () => {
    const store = createMemoryStore();
    const other = createUsageLedger({ store: store.documents, prices, scheduleFlush: manual });
    other.record(call());
    await other.flush();
    const ledger = createUsageLedger({ store: store.documents, prices, scheduleFlush: manual });
    ledger.record(call());
    const loading = ledger.load(T);
    ledger.record(call());
    await loading;
    expect(ledger.dayTotals(T, 'ada').calls).toBe(3);
    await ledger.flush();
    await ledger.load(T);
    expect(ledger.dayTotals(T, 'ada').calls).toBe(3);
  });
});

describe('usage ledger: days are UTC days', () => {
  it('a call at midnight starts the next day; loading a day reads only its own buckets', async () => {
    const clock = new SimulatedClock(MIDNIGHT - 1);
    const store = createMemoryStore();
    const ledger = createUsageLedger({ store: store.documents, prices, clock, scheduleFlush: manual });
    ledger.record(call({ at: clock.now() }));
    clock.advanceSync(1);
    ledger.record(call({ at: clock.now(), inputTokens: 7 }));
    expect(ledger.dayTotals(MIDNIGHT - 1, 'ada').inputTokens).toBe(1_000);
    expect(ledger.dayTotals(MIDNIGHT, 'ada').inputTokens).toBe(7);
    await ledger.flush();
    const keys = (await store.documents.list('usage')).map((d) => d.key.slice(0, 13));
    expect(keys).toEqual(['2026-11-28T23', '2026-11-29T00']);

    const restarted = createUsageLedger({ store: store.documents, prices, clock, scheduleFlush: manual });
    await restarted.load(clock.now());
    expect(restarted.dayTotals(MIDNIGHT, 'ada').inputTokens).toBe(7);
    expect(restarted.dayTotals(MIDNIGHT - 1, 'ada').calls).toBe(0);
    // A report without `until` reads up to the clock's now.
    clock.advanceSync(60_000);
    const rows = await restarted.report({ by: 'avatar', since: MIDNIGHT - 3_600_000 });
    expect(rows[0]).toMatchObject({ key: 'ada', calls: 2, inputTokens: 1_007 });
  });
});

describe('usage ledger: how long buckets are kept', () => {
  it('deletes the buckets of hours older than its retention (35 days by default), and only those', async () => {
    const store = createMemoryStore();
    const ledger = createUsageLedger({ store: store.documents, prices, scheduleFlush: manual });
    const DAY = 86_400_000;
    const old = T - 40 * DAY;
    const recent = T - 30 * DAY;
    for (let i = 0; i < 3; i++) ledger.record(call({ at: old, scope: `discord:${i}` }));
    ledger.record(call({ at: recent }));
    ledger.record(call({ at: T }));
    await ledger.flush();
    expect(await store.documents.list('usage')).toHaveLength(5);
    expect(await ledger.expire?.(T)).toBe(3);
    const left = (await store.documents.list('usage')).map((d) => d.key.slice(0, 10));
    expect(left).toEqual([new Date(recent).toISOString().slice(0, 10), '2026-11-28']);
    expect(await ledger.expire?.(T)).toBe(0);
  });

  it('leaves keys that are not buckets alone, whatever they sort before; a time that is not one expires nothing', async () => {
    const store = createMemoryStore();
    const foreign = ['#meta', '+010000-01-01T00|x', '0', '1999', '2026', 'avatar:ada', 'config'];
    for (const key of foreign) await store.documents.put('usage', key, { foreign: true });
    const ledger = createUsageLedger({ store: store.documents, prices, scheduleFlush: manual });
    ledger.record(call({ at: T - 40 * 86_400_000 }));
    await ledger.flush();
    expect(await ledger.expire?.(Number.NaN)).toBe(0);
    expect(await ledger.expire?.(T)).toBe(1);
    expect((await store.documents.list('usage')).map((d) => d.key).sort()).toEqual([...foreign].sort());
  });

  it('with expireEveryMs, deletes expired buckets itself after a flush, at most once per that time; a failure is logged', async () => {
    const memory = createMemoryStore().documents;
    const state = { down: false };
    // The memory store, whose reads fail while `down` (as an unreachable store's).
    const documents = new Proxy(memory, {
      get: (target, name, receiver) =>
        name === 'list' && state.down
          ? () => Promise.reject(new TroupeError('TROUPE_STORE_UNAVAILABLE', 'The store is down.'))
          : Reflect.get(target, name, receiver),
    });
    const clock = new SimulatedClock(T);
    const log = capturingLogger();
    const HOUR = 3_600_000;
    const ledger = createUsageLedger({
      store: documents,
      prices,
      clock,
      logger: log.logger,
      scheduleFlush: manual,
      expireEveryMs: HOUR,
    });
    const old = (n: number) => call({ at: T - 40 * 86_400_000, scope: `discord:old-${n}` });
    const keys = async () => (await memory.list('usage')).map((d) => d.key.slice(0, 10));
    ledger.record(old(1));
    ledger.record(call());
    await ledger.flush();
    // The first flush already expires: the old bucket it wrote goes, today's stays.
    expect(await keys()).toEqual(['2026-11-28']);
    ledger.record(old(2));
    clock.advanceSync(HOUR - 1);
    await ledger.flush();
    expect(await keys()).toEqual(['2026-10-19', '2026-11-28']);
    clock.advanceSync(1);
    await ledger.flush(); // nothing to write: it still expires
    expect(await keys()).toEqual(['2026-11-28']);
    // A store that cannot be read: the flush still resolves, and says why in the log.
    clock.advanceSync(HOUR);
    state.down = true;
    await expect(ledger.flush()).resolves.toBeUndefined();
    expect(log.lines.some((l) => l.includes('expired usage buckets not deleted'))).toBe(true);
  });

  it('keeps everything with an infinite retention; a month-old bucket goes with one of a day', async () => {
    const store = createMemoryStore();
    const forever = createUsageLedger({
      store: store.documents,
      prices,
      scheduleFlush: manual,
      retentionMs: Number.POSITIVE_INFINITY,
    });
    forever.record(call({ at: T - 400 * 86_400_000 }));
    await forever.flush();
    expect(await forever.expire?.(T)).toBe(0);
    const daily = createUsageLedger({
      store: store.documents,
      prices,
      scheduleFlush: manual,
      retentionMs: 86_400_000,
    });
    expect(await daily.expire?.(T)).toBe(1);
  });
});
