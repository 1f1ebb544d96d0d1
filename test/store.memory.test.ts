import { describe, expect, it } from 'vitest';
import { MemoryHistory } from '../src/adapters/store/memoryHistory.js';
import { MemoryOutbox } from '../src/adapters/store/memoryOutbox.js';
import { createMemoryStore } from '../src/adapters/store/memoryStore.js';
import { TroupeError } from '../src/ports/troupeError.js';
import { describeStoreContract } from './support/storeContract.js';

describeStoreContract('memory', async () => createMemoryStore());

// The standalone MemoryOutbox and MemoryHistory (what createTestRuntime uses) keep the same promises.
describeStoreContract('memory, with MemoryOutbox and MemoryHistory', async () => {
  const base = createMemoryStore();
  let closed = false;
  // The standalone parts have no close of their own: refuse their calls once the store is closed.
  const guarded = <T extends object>(part: T): T =>
    new Proxy(part, {
      get(target, key, receiver) {
        const value = Reflect.get(target, key, receiver);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) =>
          closed
            ? Promise.reject(
                new TroupeError('TROUPE_STORE_UNAVAILABLE', 'The store is closed.', { retryable: true }),
              )
            : value.apply(target, args);
      },
    });
  return {
    ...base,
    outbox: guarded(new MemoryOutbox()),
    history: guarded(new MemoryHistory()),
    async close() {
      closed = true;
      await base.close();
    },
  };
});

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
