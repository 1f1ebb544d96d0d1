import { describe, expect, it } from 'vitest';
import { createMemoryStore } from '../src/adapters/store/memoryStore.js';
import { describeStoreContract } from './support/storeContract.js';

describeStoreContract('memory', async () => createMemoryStore());

describe('memory store', () => {
  it('is of kind memory and uses the given clock', async () => {
    const store = createMemoryStore({ now: () => 42 });
    expect(store.kind).toBe('memory');
    await store.documents.put('c', 'k', 1);
    expect((await store.documents.get('c', 'k'))?.updatedAt).toBe(42);
    expect((await store.memory.put('ns', 'k', 1)).at).toBe(42);
  });

  it('keeps the last lines of a channel only', async () => {
    const store = createMemoryStore({ historyPerChannel: 3 });
    for (let n = 1; n <= 10; n++)
      await store.history.append({
        channelId: 'c',
        messageId: `m${n}`,
        at: n,
        author: { kind: 'human', id: 'u', name: 'U' },
        text: `${n}`,
      });
    expect((await store.history.recent('c', 10)).map((e) => e.messageId)).toEqual(['m8', 'm9', 'm10']);
  });
});
