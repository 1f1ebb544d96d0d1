import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { HANDOVER, HANDOVER_LIMIT, HandoverQueue } from '../../src/actors/handoverQueue.js';
import type { RuntimeEvent } from '../../src/actors/runtimeEvents.js';
import { createMemoryStore } from '../../src/adapters/store/memory/memoryStore.js';
import { openSqliteStore } from '../../src/adapters/store/sqlite/sqliteStore.js';
import type { TroupeStore } from '../../src/ports/store.js';
import { TroupeError } from '../../src/ports/troupeError.js';

const KEY = 'test:room';
const event = (messageId: string, at = 1_000): RuntimeEvent & { at: number } => ({
  type: 'channel.message',
  at,
  channel: { kind: 'test', id: 'room' },
  messageId,
  author: { kind: 'human', id: 'u1', name: 'Ada' },
  text: `message ${messageId}`,
});
const ids = (events: { event: RuntimeEvent }[]) =>
  events.map((e) => (e.event.type === 'channel.message' ? e.event.messageId : e.event.type));

const dir = mkdtempSync(join(tmpdir(), 'troupe-handover-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function describeQueue(label: string, open: () => Promise<TroupeStore>) {
  describe(`the hand-over queue on ${label}`, () => {
    it('numbers events per channel in the order the store took them and reads them back validated', async () => {
      const store = await open();
      const queue = new HandoverQueue(store.documents);
      expect(await queue.append(KEY, event('m1'), 1)).toBe(1);
      expect(await queue.append(KEY, event('m2'), 2)).toBe(2);
      expect(await queue.append('test:other', event('o1'), 3)).toBe(1);
      const read = await queue.read(KEY);
      expect(read.map((e) => e.seq)).toEqual([1, 2]);
      expect(ids(read)).toEqual(['m1', 'm2']);
      expect(read[0]?.event).toEqual(event('m1'));
      expect([...(await queue.waiting()).keys()].sort()).toEqual(['test:other', KEY]);
      await store.close();
    });

    it('keeps every event of concurrent appenders, each with its own number', async () => {
      const store = await open();
      // Two queues on one store stand for two processes: their writes meet by compare-and-set.
      const [first, second] = [new HandoverQueue(store.documents), new HandoverQueue(store.documents)];
      const seqs = await Promise.all(
        Array.from({ length: 10 }, (_, i) => (i % 2 ? first : second).append(KEY, event(`c${i}`), i)),
      );
      expect([...seqs].sort((x, y) => x - y)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
      expect((await first.read(KEY)).length).toBe(10);
      await store.close();
    });

    it('removes handled events, and the emptied queue starts numbering again', async () => {
      const store = await open();
      const queue = new HandoverQueue(store.documents);
      for (const id of ['m1', 'm2', 'm3']) await queue.append(KEY, event(id), 1);
      expect(await queue.removeThrough(KEY, 2, 5)).toBe(false);
      expect(ids(await queue.read(KEY))).toEqual(['m3']);
      expect(await queue.removeThrough(KEY, 3, 6)).toBe(true);
      expect(await store.documents.get(HANDOVER, KEY)).toBeUndefined();
      expect(await queue.waiting()).toEqual(new Map());
      expect(await queue.append(KEY, event('m4'), 7)).toBe(1);
      await store.close();
    });

    it('skips a stored entry that no longer reads as an event', async () => {
      const store = await open();
      await store.documents.put(HANDOVER, KEY, {
        next: 3,
        entries: [
          { seq: 1, event: { type: 'channel.message', text: 'no channel' } },
          { seq: 2, event: event('ok') },
        ],
      });
      expect(ids(await new HandoverQueue(store.documents).read(KEY))).toEqual(['ok']);
      await store.close();
    });
  });
}

describeQueue('the memory store', async () => createMemoryStore());
let n = 0;
describeQueue('SQLite', () => openSqliteStore({ path: join(dir, `queue-${++n}.db`) }));

describe('a full hand-over queue', () => {
  it('refuses more events with TROUPE_CHANNEL_OWNED instead of growing without bound', async () => {
    const store = createMemoryStore();
    await store.documents.put(HANDOVER, KEY, {
      next: HANDOVER_LIMIT + 1,
      entries: Array.from({ length: HANDOVER_LIMIT }, (_, i) => ({ seq: i + 1, event: event(`f${i}`) })),
    });
    const error = await new HandoverQueue(store.documents)
      .append(KEY, event('late'), 1)
      .catch((e: unknown) => e);
    expect(TroupeError.isInstance(error) && error.code).toBe('TROUPE_CHANNEL_OWNED');
  });
});
