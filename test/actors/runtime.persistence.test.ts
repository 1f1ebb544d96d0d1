import { describe, expect, it } from 'vitest';
import { LEDGER, ledgerPrefix } from '../../src/actors/channelLedger.js';
import { CHANNELS, QUARANTINE } from '../../src/actors/channelPersistence.js';
import { createMemoryStore } from '../../src/adapters/store/memory/memoryStore.js';
import type { TroupeStore } from '../../src/ports/store.js';
import { TroupeError } from '../../src/ports/troupeError.js';
import { createTestRuntime, mockModel, RecordingTransport } from '../../src/testing/index.js';

const room = { kind: 'test', id: 'room' };
const avatars = [
  { id: 'nova', name: 'Nova', residentIn: ['test:room'] },
  { id: 'rex', name: 'Rex' },
];

type Effect = Extract<
  ReturnType<typeof createTestRuntime>['inspection'][number],
  { type: 'floor.effect' }
>['effect'];

function threadEvents<T extends 'thread.opened' | 'thread.ended'>(
  t: ReturnType<typeof createTestRuntime>,
  type: T,
): Extract<Effect, { type: T }>[] {
  return t.inspection.flatMap((e) =>
    e.type === 'floor.effect' && e.effect.type === type ? [e.effect as Extract<Effect, { type: T }>] : [],
  );
}

const quiet = { summonProactiveEnabled: false };

/** Waits, a macrotask at a time (no wall-clock deadline), until `condition` holds. */
async function until(condition: () => Promise<boolean>): Promise<void> {
  while (!(await condition())) await new Promise<void>((resolve) => setImmediate(resolve));
}

/** When and how the summon thread ends in a runtime that never stops (the control). */
async function controlEnding(cast: typeof avatars = avatars, summons: string[] = ['rex'], opening?: string) {
  const control = createTestRuntime({ avatars: cast, config: quiet });
  if (opening !== undefined) await control.say(opening, { messageId: 'opening' });
  for (const id of summons) await control.summon(id);
  await control.advance(60 * 60_000);
  const ended = threadEvents(control, 'thread.ended')[0];
  await control.stop();
  if (!ended) throw new Error('the control thread never ended');
  return ended;
}

/** Nobody lives in the room: after a restart only its stored wake-up loads it. */
const visitors = avatars.map(({ residentIn: _, ...a }) => a);
const durable = { durable: true, leaseTtlMs: 1_000 };

/**
 * A runtime started on the store of `first` (killed: never stopped) 2 s later: the thread ends at
 * the control's `ended.at`, not a millisecond before, with no event to wake it.
 */
async function endsOnTimeAfterRestart(
  first: ReturnType<typeof createTestRuntime>,
  ended: Extract<Effect, { type: 'thread.ended' }>,
): Promise<void> {
  const second = createTestRuntime({
    avatars: visitors,
    store: first.store,
    persistence: durable,
    startAt: first.clock.now() + 2_000,
    config: quiet,
  });
  await second.settle();
  await second.advance(ended.at - second.clock.now() - 1);
  expect(threadEvents(second, 'thread.ended')).toEqual([]);
  await second.advance(1);
  expect(threadEvents(second, 'thread.ended')).toEqual([
    expect.objectContaining({ at: ended.at, outcome: ended.outcome, turns: ended.turns }),
  ]);
  await second.stop();
}

describe('channel state across restarts', () => {
  it('a thread with 40 s left when the process stops ends 40 s later, with no event to wake it', async () => {
    const ended = await controlEnding();
    const store = createMemoryStore();
    const first = createTestRuntime({ avatars, store, config: quiet });
    await first.summon('rex');
    await first.advance(ended.at - first.clock.now() - 40_000);
    expect(threadEvents(first, 'thread.ended')).toEqual([]);
    await first.stop();

    const second = createTestRuntime({ avatars, store, startAt: first.clock.now(), config: quiet });
    await second.settle();
    expect(threadEvents(second, 'thread.ended')).toEqual([]);
    await second.advance(39_999);
    expect(threadEvents(second, 'thread.ended')).toEqual([]);
    await second.advance(1);
    expect(threadEvents(second, 'thread.ended')).toEqual([
      expect.objectContaining({ at: ended.at, outcome: ended.outcome, turns: ended.turns }),
    ]);
    await second.stop();
  });

  it('a thread whose deadline passed while the process was down ends at once, at its deadline', async () => {
    const ended = await controlEnding();
    const store = createMemoryStore();
    const first = createTestRuntime({ avatars, store, config: quiet });
    await first.summon('rex');
    await first.stop();
    const second = createTestRuntime({ avatars, store, startAt: ended.at + 3_600_000, config: quiet });
    await second.settle();
    expect(threadEvents(second, 'thread.ended')).toEqual([
      expect.objectContaining({ at: ended.at, outcome: ended.outcome }),
    ]);
    await second.stop();
  });

  it('a process that dies mid-thread (no stop) leaves a wake-up no later than the thread’s end: it ends on time after a restart', async () => {
    // A person speaks first, to nobody: the room's state is stored before the thread exists.
    const opening = 'Anyone here?';
    const ended = await controlEnding(visitors, ['nova', 'rex'], opening);
    const first = createTestRuntime({
      avatars: visitors,
      store: createMemoryStore(),
      persistence: durable,
      config: quiet,
    });
    await first.say(opening, { messageId: 'opening' });
    await first.summon('nova');
    await first.summon('rex');
    await first.advance(ended.at - first.clock.now() - 40_000);
    await first.settle();
    // Killed here: nothing compacted, nothing released; its in-memory timers are gone with it.
    await endsOnTimeAfterRestart(first, ended);
  });

  it('a channel woken from its stored state, then killed mid-thread, still ends the thread on time after a restart', async () => {
    /** A first thread that ends, both dismissed, the channel dropped (stored with no deadline), then a second thread. */
    const script = async (t: ReturnType<typeof createTestRuntime>) => {
      await t.summon('nova');
      await t.summon('rex');
      await t.advance(60 * 60_000);
      await t.dismiss('nova');
      await t.dismiss('rex');
      await t.advance(30 * 60_000);
      expect(t.runtime.activeChannels()).toEqual([]);
      await t.summon('nova');
      await t.summon('rex');
    };
    const control = createTestRuntime({ avatars: visitors, config: quiet });
    await script(control);
    await control.advance(60 * 60_000);
    const ended = threadEvents(control, 'thread.ended')[1];
    await control.stop();
    if (!ended) throw new Error('the second thread never ended');

    const first = createTestRuntime({
      avatars: visitors,
      store: createMemoryStore(),
      persistence: durable,
      config: quiet,
    });
    await script(first);
    await first.advance(ended.at - first.clock.now() - 40_000);
    await first.settle();
    // Killed here. The thread's deadline was stored only with the ledger entries written since the
    // channel woke: its snapshot, written when it was dropped, had none.
    await endsOnTimeAfterRestart(first, ended);
  });

  it('keeps who is present and their guaranteed turns across a restart', async () => {
    const store = createMemoryStore();
    const first = createTestRuntime({ avatars, store });
    await first.summon('rex');
    const before = first.runtime.view(room)?.present.find((p) => p.id === 'rex');
    await first.stop();
    const second = createTestRuntime({ avatars, store, startAt: first.clock.now() });
    await second.say('anyone?', { messageId: 'after-restart' });
    const after = second.runtime.view(room)?.present.find((p) => p.id === 'rex');
    expect(after).toBeDefined();
    // Exactly the turns Rex held at the stop, less one per guaranteed turn spent since.
    const spent = second.inspection.filter(
      (e) =>
        e.type === 'floor.effect' &&
        e.effect.type === 'turn.consumed' &&
        e.effect.avatarId === 'rex' &&
        e.effect.summonTurnsLeft !== undefined,
    ).length;
    expect(before?.summonTurns).toBeGreaterThan(1);
    expect(after?.summonTurns).toBe((before?.summonTurns ?? 0) - spent);
    await second.stop();
  });
});

describe('what a channel keeps', () => {
  it('forgets the turns spoken in a thread once the thread ended (in memory and in the store)', async () => {
    const store = createMemoryStore();
    const t = createTestRuntime({ avatars, store, config: quiet });
    await t.summon('rex');
    await t.say('Rex, what bread do you bake?');
    const opened = threadEvents(t, 'thread.opened').map((e) => e.threadId);
    expect(opened.length).toBeGreaterThan(0);
    await t.advance(60 * 60_000);
    const ended = threadEvents(t, 'thread.ended').map((e) => e.threadId);
    expect(ended).toEqual(expect.arrayContaining(opened));
    await t.stop();
    const stored = await store.documents.get<{ spoken: [string, string, number][] }>(CHANNELS, 'test:room');
    expect(stored?.value.spoken.filter(([threadId]) => ended.includes(threadId))).toEqual([]);
  });
});

describe('passivation', () => {
  it('drops an idle channel actor from memory and brings it back from the store on the next event', async () => {
    const t = createTestRuntime({ avatars, persistence: { passivateAfterMs: 60_000 } });
    await t.summon('rex');
    await t.advance(10 * 60_000);
    expect(t.runtime.activeChannels()).toEqual([]);
    expect(t.inspection).toContainEqual(
      expect.objectContaining({ type: 'actor.stopped', reason: 'passivated' }),
    );
    const stored = await t.store.documents.get(CHANNELS, 'test:room');
    expect(stored).toBeDefined();
    await t.say('Rex, are you still here?');
    expect(t.runtime.activeChannels()).toEqual(['test:room']);
    expect(
      t.runtime
        .view(room)
        ?.present.map((p) => p.id)
        .sort(),
    ).toEqual(['nova', 'rex']);
    expect(t.transport.sent.at(-1)?.speaker?.name).toBe('Rex');
    await t.stop();
  });

  it('wakes a passivated channel at its deadline, as if it had never been dropped', async () => {
    const ended = await controlEnding();
    const t = createTestRuntime({ avatars, persistence: { passivateAfterMs: 1_000 }, config: quiet });
    await t.summon('rex');
    await t.advance(ended.at - t.clock.now() - 1);
    expect(t.inspection).toContainEqual(
      expect.objectContaining({ type: 'actor.stopped', reason: 'passivated' }),
    );
    expect(threadEvents(t, 'thread.ended')).toEqual([]);
    await t.advance(1);
    expect(threadEvents(t, 'thread.ended')).toEqual([
      expect.objectContaining({ at: ended.at, outcome: ended.outcome }),
    ]);
    await t.stop();
  });
});

describe('redelivered messages', () => {
  it('a message redelivered after passivation or a restart is not answered twice', async () => {
    const store = createMemoryStore();
    const resident = [{ id: 'nova', name: 'Nova', residentIn: ['test:room'] }];
    const t = createTestRuntime({ avatars: resident, store, persistence: { passivateAfterMs: 60_000 } });
    await t.say('Nova, hello?', { messageId: 'm1' });
    await t.advance(10 * 60_000);
    expect(t.inspection).toContainEqual(
      expect.objectContaining({ type: 'actor.stopped', reason: 'passivated' }),
    );
    await t.say('Nova, hello?', { messageId: 'm1' });
    expect(t.transport.sent.filter((m) => m.replyTo?.messageId === 'm1')).toHaveLength(1);
    await t.stop();

    const restarted = createTestRuntime({ avatars: resident, store, startAt: t.clock.now() });
    await restarted.say('Nova, hello?', { messageId: 'm1' });
    expect(restarted.transport.sent).toEqual([]);
    await restarted.stop();
  });
});

describe('bad stored state', () => {
  it('quarantines a foreign channel document, reports it with a code, and starts the channel fresh', async () => {
    const store = createMemoryStore();
    await store.documents.put(CHANNELS, 'test:room', {
      floor: { format: 'somebody-else', data: 42 },
      spoken: [],
    });
    const t = createTestRuntime({ avatars, store });
    await t.say('Nova, hello?');
    expect(t.errors.map((e) => e.code)).toContain('TROUPE_SNAPSHOT_INVALID');
    expect(t.transport.sent).toHaveLength(1);
    const quarantined = await store.documents.list(QUARANTINE);
    expect(quarantined).toHaveLength(1);
    expect(JSON.stringify(quarantined[0]?.value)).toContain('somebody-else');
    await t.stop();
  });

  it('keeps answering when the store goes away, and says so', async () => {
    const store = createMemoryStore();
    const failing: TroupeStore = {
      ...store,
      documents: {
        ...store.documents,
        get: () =>
          Promise.reject(new TroupeError('TROUPE_STORE_UNAVAILABLE', 'store is down', { retryable: true })),
        put: () =>
          Promise.reject(new TroupeError('TROUPE_STORE_UNAVAILABLE', 'store is down', { retryable: true })),
        putMany: () =>
          Promise.reject(new TroupeError('TROUPE_STORE_UNAVAILABLE', 'store is down', { retryable: true })),
        list: () =>
          Promise.reject(new TroupeError('TROUPE_STORE_UNAVAILABLE', 'store is down', { retryable: true })),
        delete: store.documents.delete.bind(store.documents),
        expireIdle: store.documents.expireIdle.bind(store.documents),
      },
    };
    const t = createTestRuntime({ avatars, store: failing });
    await t.say('Nova, are you there?');
    expect(t.transport.sent).toHaveLength(1);
    expect(t.errors.map((e) => e.code)).toContain('TROUPE_STORE_UNAVAILABLE');
    await t.stop();
  });
});

describe('turns in flight at a crash', () => {
  it('generates again a turn that was claimed but never recorded, and delivers it once', async () => {
    const store = createMemoryStore();
    let asked!: () => void;
    const generating = new Promise<void>((resolve) => {
      asked = resolve;
    });
    const hanging = mockModel(() => {
      asked();
      return new Promise(() => {});
    });
    // The memory store stands in for a durable one: its state is written behind as a SQLite file's is.
    const crashed = createTestRuntime({
      avatars,
      store,
      model: hanging,
      settleLimitMs: 20,
      persistence: { durable: true },
    });
    crashed.runtime.send({
      type: 'channel.message',
      channel: room,
      messageId: 'q1',
      author: { kind: 'human', id: 'u1', name: 'Ada' },
      text: 'Nova, what is that?',
    });
    // The batched flush writes the floor with the claim in flight (the model never answers).
    await generating;
    crashed.clock.advanceSync(1_000);
    await until(async () => {
      const stored = await store.documents.get<{ floor: { inFlight: unknown[] } }>(CHANNELS, 'test:room');
      return (stored?.value.floor.inFlight.length ?? 0) > 0;
    });
    // The process dies here: crashed is simply abandoned.

    const transport = new RecordingTransport();
    const restarted = createTestRuntime({
      avatars,
      store,
      transports: [transport],
      startAt: crashed.clock.now(),
    });
    await restarted.settle();
    expect(transport.sent).toHaveLength(1);
    expect(transport.sent[0]?.replyTo).toEqual({ messageId: 'q1' });
    expect(restarted.runtime.view(room)?.inFlight).toEqual([]);
    await restarted.stop();
  });
});

describe('the turn ledger', () => {
  it('stores a reply as a few floor events, not the whole floor, and a crash restores the same floor from them', async () => {
    const store = createMemoryStore();
    // The memory store stands in for a durable one: its state is written behind as a SQLite file's is.
    const crashed = createTestRuntime({ avatars, store, persistence: { durable: true, ledgerLimit: 64 } });
    await crashed.say('Nova, what do you think of comets?');
    await crashed.advance(1_000);
    await crashed.say('Nova, and of tides?');
    await crashed.advance(1_000);
    expect(crashed.transport.sent).toHaveLength(2);
    // The floor was written whole once (its first write); every change since is in the ledger.
    const snapshot = await store.documents.get(CHANNELS, 'test:room');
    expect(snapshot?.version).toBe(1);
    const entries = await store.documents.list<{ events: { type: string }[] }>(LEDGER, {
      keyPrefix: ledgerPrefix('test:room'),
    });
    const types = entries.flatMap((e) => e.value.events.map((ev) => ev.type));
    // The first write (the fresh floor, before the first reply) was whole; the second exchange is in the ledger.
    expect(types).toContain('message');
    // The first reply's delivery went out with the second exchange; the second's is not written
    // (a delivery alone waits for the channel's next write): the restart gives it from the outbox.
    expect(types.filter((t) => t === 'turn.delivered')).toHaveLength(1);
    const before = crashed.runtime.view(room);
    // The process dies here: crashed is simply abandoned.

    const transport = new RecordingTransport();
    const restarted = createTestRuntime({
      avatars,
      store,
      transports: [transport],
      startAt: crashed.clock.now(),
    });
    expect(await restarted.runtime.open(room)).toEqual(before);
    await restarted.settle();
    expect(transport.sent).toHaveLength(0);
    // A redelivered message is recognised from the ledger too.
    restarted.runtime.send({
      type: 'channel.message',
      channel: room,
      messageId: crashed.transport.sent[0]?.replyTo?.messageId ?? 'missing',
      author: { kind: 'human', id: 'u1', name: 'Ada' },
      text: 'Nova, what do you think of comets?',
    });
    await restarted.settle();
    expect(transport.sent).toHaveLength(0);
    // Stopping folds the ledger into the snapshot and deletes it.
    await restarted.stop();
    expect((await store.documents.get(CHANNELS, 'test:room'))?.version).toBe(2);
    expect(await store.documents.list(LEDGER, { keyPrefix: ledgerPrefix('test:room') })).toEqual([]);
  });

  it('quarantines a channel whose ledger entry is not a list of floor events', async () => {
    const store = createMemoryStore();
    const first = createTestRuntime({ avatars, store, persistence: { durable: true, ledgerLimit: 64 } });
    await first.say('Nova, hello?');
    await first.advance(1_000);
    await first.say('anyone around?');
    await first.advance(1_000);
    const entries = await store.documents.list(LEDGER, { keyPrefix: ledgerPrefix('test:room') });
    expect(entries.length).toBeGreaterThan(0);
    await store.documents.put(LEDGER, entries[0]?.key ?? '', { events: [{ type: 'message', at: 'soon' }] });
    const second = createTestRuntime({ avatars, store, startAt: first.clock.now() });
    await second.say('Nova, still there?');
    expect(second.errors.map((e) => e.code)).toContain('TROUPE_SNAPSHOT_INVALID');
    expect(second.transport.sent).toHaveLength(1);
    const quarantined = await store.documents.list(QUARANTINE);
    expect(JSON.stringify(quarantined[0]?.value)).toContain('soon');
    await second.stop();
  });
});
