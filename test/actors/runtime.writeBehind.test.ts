import { describe, expect, it } from 'vitest';
import { CHANNELS } from '../../src/actors/channelPersistence.js';
import { createMemoryStore } from '../../src/adapters/store/memory/memoryStore.js';
import type { DocumentOperation, TroupeStore } from '../../src/ports/store.js';
import { createTestRuntime } from '../../src/testing/index.js';

/** A store whose batch writes take a few event-loop turns (a disk that is slow, not gone). */
function slowStore(): TroupeStore {
  const store = createMemoryStore();
  const inner = store.documents;
  const documents = Object.create(inner) as typeof inner;
  documents.batch = async (operations: readonly DocumentOperation[], at?: number) => {
    for (let i = 0; i < 20; i++) await new Promise<void>((resolve) => setImmediate(resolve));
    return inner.batch(operations, at);
  };
  return { ...store, documents };
}

describe('write-behind flushes', () => {
  it('are work in flight: the runtime settles only once the flush its timer started is stored', async () => {
    const store = slowStore();
    // Nobody is present, so the message changes the floor and nothing replies (no flush before a send).
    const t = createTestRuntime({
      avatars: [{ id: 'nova', name: 'Nova' }],
      store,
      persistence: { durable: true, flushIntervalMs: 250 },
    });
    await t.say('is anyone here?');
    expect(await store.documents.get(CHANNELS, 'test:room')).toBeUndefined();
    await t.advance(250);
    const stored = await store.documents.get<{ seen: string[] }>(CHANNELS, 'test:room');
    expect(stored?.value.seen).toHaveLength(1);
    expect(t.transport.sent).toEqual([]);
    await t.stop();
  });
});
