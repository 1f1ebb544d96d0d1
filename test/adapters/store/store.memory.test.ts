import { describe, expect, it } from 'vitest';
import { compareKeys } from '../../../src/adapters/store/jsonValue.js';
import { MemoryHistory } from '../../../src/adapters/store/memory/memoryHistory.js';
import { MemoryOutbox } from '../../../src/adapters/store/memory/memoryOutbox.js';
import { createMemoryStore } from '../../../src/adapters/store/memory/memoryStore.js';
import { TroupeError } from '../../../src/ports/troupeError.js';
import { describeStoreContract } from '../../support/storeContract.js';

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

  it('lists pages in key order while keys come and go between pages (every way a key is added or removed)', async () => {
    let now = 0;
    const store = createMemoryStore({ now: () => now });
    const docs = store.documents;
    const model = new Map<string, number>();
    const random = (() => {
      let x = 7;
      return () => {
        x = (x * 1_103_515_245 + 12_345) % 2_147_483_648;
        return x / 2_147_483_648;
      };
    })();
    // Keys with a shared prefix, astral characters (they sort by code point) and plain ones.
    const keyOf = (n: number) =>
      [`a/${n}`, `b/${n % 7}/${n}`, `\u{1F600}${n}`, `\uFFFD${n}`, `${n}`][n % 5] as string;
    const expected = (afterKey: string | undefined, prefix: string | undefined) =>
      [...model.keys()]
        .filter(
          (k) =>
            (afterKey === undefined || compareKeys(k, afterKey) > 0) && (!prefix || k.startsWith(prefix)),
        )
        .sort(compareKeys);
    /** A key that is there, when any is. */
    const present = (n: number) => [...model.keys()].sort(compareKeys)[n % Math.max(1, model.size)];
    for (let round = 0; round < 40; round++) {
      now += 10;
      const n = Math.floor(random() * 200);
      const op = Math.floor(random() * 5);
      const key = keyOf(n);
      if (op === 0) {
        await docs.put('c', key, n);
        model.set(key, now);
      } else if (op === 1) {
        const writes = [keyOf(n + 1), keyOf(n + 2)].map((k) => ({ key: k, value: n }));
        await docs.putMany('c', writes);
        for (const w of writes) model.set(w.key, now);
      } else if (op === 2) {
        const gone = present(n + 3);
        const ops = [
          { op: 'put' as const, collection: 'c', key, value: n },
          ...(gone !== undefined && gone !== key
            ? [{ op: 'delete' as const, collection: 'c', key: gone }]
            : []),
        ];
        await docs.batch(ops);
        model.set(key, now);
        if (gone !== undefined && gone !== key) model.delete(gone);
      } else if (op === 3) {
        const gone = present(n) ?? key;
        await docs.delete('c', gone);
        model.delete(gone);
      } else if (round % 10 === 9) {
        await docs.expireIdle('c', now - 50);
        for (const [k, at] of model) if (at < now - 50) model.delete(k);
      }
      // Page through (the prefix sometimes), changing the collection between pages.
      const prefix = [undefined, 'a/', 'b/3/', '\u{1F600}'][round % 4];
      let afterKey: string | undefined;
      for (let page = 0; page < 3; page++) {
        const listed = await docs.list('c', {
          limit: 5,
          ...(afterKey !== undefined ? { afterKey } : {}),
          ...(prefix !== undefined ? { keyPrefix: prefix } : {}),
        });
        expect(listed.map((d) => d.key)).toEqual(expected(afterKey, prefix).slice(0, 5));
        if (listed.length === 0) break;
        afterKey = listed[listed.length - 1]?.key;
        now += 1;
        await docs.put('c', keyOf(n + 10 + page), page);
        model.set(keyOf(n + 10 + page), now);
      }
    }
    expect(model.size).toBeGreaterThan(20);
  });
});
