import { describe, expect, it } from 'vitest';
import { SimulatedClock } from '../../src/actors/clock.js';
import {
  RELATIONSHIPS,
  type Relationship,
  RelationshipTracker,
  relationshipKey,
  relationshipNote,
} from '../../src/actors/relationshipTracker.js';
import { createScriptedModel } from '../../src/adapters/llm/scriptedModel.js';
import { createMemoryStore } from '../../src/adapters/store/memory/memoryStore.js';
import { silentLogger } from '../../src/logging/logger.js';
import { createTestRuntime, mockModel } from '../../src/testing/index.js';

describe('relationship tracking', () => {
  it('records avatar-to-avatar exchanges, stores them, and puts them in later prompts', async () => {
    const scripted = createScriptedModel();
    // The offline model's replies (it mentions avatars back), with every prompt recorded.
    const model = mockModel((request) => scripted.generateTurn(request), { local: true });
    const prompts = model.calls;
    const t = createTestRuntime({ model });
    await t.summon('nova');
    await t.summon('rex');
    await t.say('Nova, ask Rex about bread');
    await t.advance(10 * 60_000);
    await t.stop();

    const nova = await t.store.documents.get<Relationship>(RELATIONSHIPS, relationshipKey('nova', 'rex'));
    const withRex = nova?.value;
    expect(withRex?.exchanges).toBeGreaterThan(0);
    expect(withRex?.channels['test:room']).toBe(withRex?.exchanges);
    expect(withRex?.recent.length).toBeGreaterThan(0);
    const rex = await t.store.documents.get<Relationship>(RELATIONSHIPS, relationshipKey('rex', 'nova'));
    expect(rex?.value.exchanges).toBe(withRex?.exchanges);

    // A later turn between them carries the note in its system prompt.
    const later = createTestRuntime({ model, store: t.store, startAt: t.clock.now() });
    prompts.length = 0;
    await later.say('Rex, what would Nova say about sourdough?', { messageId: 'later-1' });
    await later.advance(60_000);
    const systems = prompts.map((p) => p.prompt.system).join('\n');
    expect(systems).toMatch(/You and (Nova|Rex) have talked \d+ times?/);
    await later.stop();
  });

  it('counts exchanges in the 8 channels where two avatars last talked, so a shared cast in many channels stays small', async () => {
    const store = createMemoryStore();
    const clock = new SimulatedClock(0);
    const tracker = new RelationshipTracker({ documents: store.documents, clock, logger: silentLogger() });
    const exchange = (channel: number, at: number) =>
      tracker.record({
        speakerId: 'nova',
        addresseeId: 'rex',
        channelKey: `room:${channel}`,
        text: 'hi',
        at,
      });
    for (let channel = 0; channel < 12; channel++) await exchange(channel, channel);
    // Channel 6 again: it becomes the latest, with both of its exchanges.
    await exchange(6, 100);
    await tracker.flush();
    const [rel] = await tracker.about('nova', ['rex']);
    expect(rel?.exchanges).toBe(13);
    expect(Object.entries(rel?.channels ?? {})).toEqual([
      ['room:4', 1],
      ['room:5', 1],
      ['room:7', 1],
      ['room:8', 1],
      ['room:9', 1],
      ['room:10', 1],
      ['room:11', 1],
      ['room:6', 2],
    ]);
    const stored = await store.documents.get<Relationship>(RELATIONSHIPS, relationshipKey('rex', 'nova'));
    expect(Object.keys(stored?.value.channels ?? {})).toHaveLength(8);
    await store.close();
  });

  it('starts the counts over for a stored relationship whose channels or lines are not what Troupe writes', async () => {
    for (const [channels, recent] of [
      [null, []],
      ['room', []],
      [Array.from({ length: 20 }, (_, i) => i), []],
      [{}, 'not lines'],
    ] as const) {
      const store = createMemoryStore();
      const rex = { partnerId: 'rex', exchanges: 3, firstAt: 0, lastAt: 1, channels, recent };
      await store.documents.put(RELATIONSHIPS, 'nova', { avatarId: 'nova', partners: { rex } });
      const clock = new SimulatedClock(10);
      const tracker = new RelationshipTracker({ documents: store.documents, clock, logger: silentLogger() });
      await tracker.record({
        speakerId: 'nova',
        addresseeId: 'rex',
        channelKey: 'room:1',
        text: 'hi',
        at: 5,
      });
      await tracker.flush();
      const stored = await store.documents.get<Relationship>(RELATIONSHIPS, relationshipKey('nova', 'rex'));
      expect(stored?.value).toMatchObject({ exchanges: 4, channels: { 'room:1': 1 } });
      expect(stored?.value.recent).toHaveLength(1);
      // The one-document form it was read from is gone.
      expect(await store.documents.get(RELATIONSHIPS, 'nova')).toBeUndefined();
      await store.close();
    }
  });

  it('a flush writes only the pairs that talked since the last one', async () => {
    const store = createMemoryStore();
    const clock = new SimulatedClock(0);
    const tracker = new RelationshipTracker({ documents: store.documents, clock, logger: silentLogger() });
    const say = (speakerId: string, addresseeId: string, at: number) =>
      tracker.record({ speakerId, addresseeId, channelKey: 'room:1', text: 'hi', at });
    await say('nova', 'rex', 1);
    await say('nova', 'bob', 2);
    await tracker.flush();
    await say('nova', 'rex', 3);
    await tracker.flush();
    const version = async (self: string, other: string) =>
      (await store.documents.get(RELATIONSHIPS, relationshipKey(self, other)))?.version;
    expect(await version('nova', 'rex')).toBe(2);
    expect(await version('rex', 'nova')).toBe(2);
    expect(await version('nova', 'bob')).toBe(1);
    expect(await version('bob', 'nova')).toBe(1);
    await store.close();
  });

  it('a flush that loses to another writer forgets those avatars and reads them again', async () => {
    const store = createMemoryStore();
    const clock = new SimulatedClock(0);
    const tracker = () =>
      new RelationshipTracker({ documents: store.documents, clock, logger: silentLogger() });
    const first = tracker();
    const second = tracker();
    const say = (t: RelationshipTracker, at: number) =>
      t.record({ speakerId: 'nova', addresseeId: 'rex', channelKey: 'room:1', text: 'hi', at });
    await say(first, 1);
    await say(second, 2);
    await first.flush();
    // The second's pairs were made at version 0 too: its batch loses, and nothing of it is written.
    await second.flush();
    const stored = async () =>
      (await store.documents.get<Relationship>(RELATIONSHIPS, relationshipKey('nova', 'rex')))?.value;
    expect((await stored())?.exchanges).toBe(1);
    await say(second, 3);
    await second.flush();
    expect((await stored())?.exchanges).toBe(2);
    await store.close();
  });

  it('reads relationships stored one document per avatar, and writes them again as pairs', async () => {
    const store = createMemoryStore();
    const rel = (partnerId: string, exchanges: number): Relationship => ({
      partnerId,
      exchanges,
      firstAt: 0,
      lastAt: 1,
      channels: { 'room:0': exchanges },
      recent: [{ at: 1, speakerId: partnerId, channelKey: 'room:0', text: 'earlier' }],
    });
    await store.documents.put(RELATIONSHIPS, 'nova', {
      avatarId: 'nova',
      partners: { rex: rel('rex', 3), bob: rel('bob', 7) },
    });
    const clock = new SimulatedClock(10);
    const tracker = new RelationshipTracker({ documents: store.documents, clock, logger: silentLogger() });
    expect((await tracker.about('nova', ['bob']))[0]?.exchanges).toBe(7);
    await tracker.record({ speakerId: 'nova', addresseeId: 'rex', channelKey: 'room:1', text: 'hi', at: 5 });
    await tracker.flush();
    const pair = async (other: string) =>
      (await store.documents.get<Relationship>(RELATIONSHIPS, relationshipKey('nova', other)))?.value;
    expect(await pair('rex')).toMatchObject({ exchanges: 4, channels: { 'room:0': 3, 'room:1': 1 } });
    expect(await pair('bob')).toMatchObject({ exchanges: 7 });
    expect(await store.documents.get(RELATIONSHIPS, 'nova')).toBeUndefined();
    // A later process reads the pairs alone.
    const later = new RelationshipTracker({ documents: store.documents, clock, logger: silentLogger() });
    const known = await later.about('nova', ['rex', 'bob']);
    expect(known.map((r) => [r.partnerId, r.exchanges])).toEqual([
      ['rex', 4],
      ['bob', 7],
    ]);
    await store.close();
  });

  it('writes a short, clipped note', () => {
    const note = relationshipNote(
      [
        {
          partnerId: 'rex',
          exchanges: 3,
          firstAt: 0,
          lastAt: 60_000,
          channels: { 'test:room': 3 },
          recent: [
            { at: 60_000, speakerId: 'rex', channelKey: 'test:room', text: 'Sourdough is a lifestyle.' },
          ],
        },
      ],
      (id) => (id === 'rex' ? 'Rex' : id),
      4 * 60_000,
    );
    expect(note).toBe(
      'Your history with them:\n- You and Rex have talked 3 times, last 3 minutes ago. Lately — Rex: “Sourdough is a lifestyle.”',
    );
  });
});
