/**
 * The usage ledger and the daily caps in a running runtime: every turn's tokens are recorded
 * against its avatar and channel; an avatar at its cap takes no more turns (in any lane), a person
 * who calls on it is told once, the counts survive a restart, and the next UTC day lifts the cap.
 */
import { describe, expect, it } from 'vitest';
import { createMemoryStore } from '../../src/adapters/store/memory/memoryStore.js';
import { createTestRuntime, mockModel } from '../../src/testing/index.js';

const avatars = [
  { id: 'nova', name: 'Nova', residentIn: ['test:room'] },
  { id: 'rex', name: 'Rex', residentIn: ['test:room'], caps: { maxTokensPerDay: 1_000 } },
];
/** 10:00 UTC: the day ends 14 hours later. */
const START = Date.UTC(2026, 10, 28, 10, 0, 0);
const KIM = { id: 'u-kim', name: 'Kim' };
const LEE = { id: 'u-lee', name: 'Lee' };
const quiet = { summonProactiveEnabled: false, botMentionCreateThread: false, botCascadeLimit: 0 };
const priced = () =>
  mockModel(
    { text: 'Sure.', usage: { inputTokens: 1_000, outputTokens: 500 } },
    { id: 'openai:gpt-4o-mini', local: true },
  );

describe('daily token caps', () => {
  it('record each turn, stop an avatar at its cap, tell a person once, and keep other avatars speaking', async () => {
    const t = createTestRuntime({
      avatars,
      model: priced(),
      config: { ...quiet, avatarMaxTokensPerDay: 2_000 },
      startAt: START,
    });
    await t.say('Nova, hi', { as: KIM });
    await t.say('Nova, again?', { as: KIM });
    expect(t.transport.texts()).toEqual(['Sure.', 'Sure.']);
    const usage = t.runtime.usage;
    expect(usage?.dayTotals(t.clock.now(), 'nova')).toMatchObject({
      calls: 2,
      inputTokens: 2_000,
      outputTokens: 1_000,
    });
    // gpt-4o-mini: $0.15 and $0.60 per million tokens.
    expect(usage?.dayTotals(t.clock.now(), 'nova').costUsd).toBeCloseTo(
      (2 * (1_000 * 0.15 + 500 * 0.6)) / 1e6,
      12,
    );

    await t.say('Nova, third time?', { as: KIM });
    await t.say('Nova, hello??', { as: KIM });
    expect(t.transport.texts().slice(2)).toEqual([
      "Nova has reached today's token limit and can answer again after 00:00 UTC.",
    ]);
    const suppressed = t.inspection.flatMap((e) =>
      e.type === 'floor.effect' && e.effect.type === 'candidate.suppressed' ? [e.effect] : [],
    );
    expect(suppressed.map((e) => [e.avatarId, e.reason, e.detail])).toContainEqual([
      'nova',
      'cap-avatar-tokens',
      '3,000 of 2,000 tokens today',
    ]);
    // Rex has a cap of its own (1,000): one answer (1,500 tokens), then it is capped too.
    await t.say('Rex, you?', { as: LEE });
    await t.say('Rex, more?', { as: LEE });
    expect(t.transport.texts().slice(3)).toEqual([
      'Sure.',
      "Rex has reached today's token limit and can answer again after 00:00 UTC.",
    ]);
    const rows = await usage?.report({ by: 'avatar', since: START });
    expect(rows?.map((r) => [r.key, r.calls, r.inputTokens + r.outputTokens])).toEqual([
      ['nova', 2, 3_000],
      ['rex', 1, 1_500],
    ]);
    await t.stop();
  });

  it('hold across a restart, and lift at the next UTC day with nothing queued to burst out', async () => {
    const store = createMemoryStore();
    const config = { ...quiet, avatarMaxTokensPerDay: 1_000, capNotice: 'silent' as const };
    const first = createTestRuntime({ avatars, store, model: priced(), config, startAt: START });
    await first.say('Nova, hi', { as: KIM });
    expect(first.transport.texts()).toEqual(['Sure.']);
    await first.stop();

    const second = createTestRuntime({
      avatars,
      store,
      model: priced(),
      config,
      startAt: first.clock.now() + 1_000,
    });
    await second.say('Nova, still there?', { as: KIM });
    await second.say('Nova?', { as: LEE });
    expect(second.transport.texts()).toEqual([]);
    expect(second.runtime.usage?.dayTotals(second.clock.now(), 'nova').calls).toBe(1);
    await second.advance(14 * 3_600_000);
    expect(second.transport.texts()).toEqual([]);
    await second.say('Nova, a new day?', { as: KIM });
    expect(second.transport.texts()).toEqual(['Sure.']);
    await second.stop();
  });

  it("count another process's calls on the same store within a minute", async () => {
    const store = createMemoryStore();
    const shared = [{ id: 'nova', name: 'Nova', residentIn: ['test:a', 'test:b'] }];
    const config = { ...quiet, maxTokensPerDay: 2_000, capNotice: 'silent' as const };
    const options = {
      avatars: shared,
      store,
      model: priced(),
      config,
      startAt: START,
      persistence: { durable: true },
    };
    const a = createTestRuntime({ ...options, channel: { kind: 'test', id: 'a' } });
    const b = createTestRuntime({ ...options, channel: { kind: 'test', id: 'b' } });
    await b.say('Nova, hi from b', { as: LEE });
    await a.say('Nova, hi', { as: KIM });
    await a.say('Nova, again', { as: KIM });
    await a.runtime.usage?.flush();
    expect(b.transport.texts()).toEqual(['Sure.']);
    // b read the day when it started; its sweep reads it again.
    await b.advance(60_000);
    await b.runtime.usage?.flush();
    await b.say('Nova, still there?', { as: LEE });
    expect(b.transport.texts()).toEqual(['Sure.']);
    expect(b.runtime.usage?.dayTotals(b.clock.now()).calls).toBe(3);
    await Promise.all([a.stop(), b.stop()]);
  });

  it('apply to every avatar together with TROUPE_MAX_TOKENS_PER_DAY', async () => {
    const t = createTestRuntime({
      avatars,
      model: priced(),
      config: { ...quiet, maxTokensPerDay: 2_000 },
      startAt: START,
    });
    await t.say('Nova, hi', { as: KIM });
    await t.say('Nova, and?', { as: KIM });
    await t.say('Nova?', { as: LEE });
    expect(t.transport.texts()).toEqual([
      'Sure.',
      'Sure.',
      "The avatars have reached today's token limit; Nova can answer again after 00:00 UTC.",
    ]);
    await t.stop();
  });

  it('record calls of a model that reports no usage as such, and never cap on them', async () => {
    const t = createTestRuntime({
      avatars,
      model: mockModel('Sure.', { local: true }),
      config: { ...quiet, avatarMaxTokensPerDay: 1 },
      startAt: START,
    });
    await t.say('Nova, hi', { as: KIM });
    await t.say('Nova, again', { as: KIM });
    expect(t.transport.texts()).toEqual(['Sure.', 'Sure.']);
    expect(t.runtime.usage?.dayTotals(t.clock.now(), 'nova')).toMatchObject({
      calls: 2,
      callsWithoutUsage: 2,
      inputTokens: 0,
    });
    await t.stop();
  });
});

describe('usage buckets kept', () => {
  it('the runtime deletes buckets older than the ledger keeps them, in its hourly sweep', async () => {
    const store = createMemoryStore();
    const old = '2026-10-01T10|avatar:nova|test:room|turn|openai:gpt-4o-mini';
    await store.documents.put('usage', old, { note: 'a bucket of 58 days ago' });
    const t = createTestRuntime({ avatars, store, model: priced(), config: quiet, startAt: START });
    await t.say('Nova, hi', { as: KIM });
    await t.advance(61 * 60_000);
    await t.runtime.usage?.flush();
    const keys = (await store.documents.list('usage')).map((d) => d.key);
    expect(keys).not.toContain(old);
    expect(keys.some((k) => k.startsWith('2026-11-28T10|avatar:nova'))).toBe(true);
    await t.stop();
  });

  it('a store that does not outlive the process keeps three days of buckets; a durable one, 35', async () => {
    const fourDaysAgo = '2026-11-24T09|avatar:nova|test:room|turn|openai:gpt-4o-mini';
    for (const durable of [false, true]) {
      const store = createMemoryStore();
      await store.documents.put('usage', fourDaysAgo, { note: 'four days ago' });
      const t = createTestRuntime({
        avatars,
        store,
        config: quiet,
        startAt: START,
        persistence: { durable },
      });
      await t.advance(61 * 60_000);
      const kept = (await store.documents.list('usage')).map((d) => d.key);
      expect(kept.includes(fourDaysAgo)).toBe(durable);
      await t.stop();
    }
  });
});
