/**
 * Memory stays flat: the in-memory store's bounded structures hold exactly their caps (not up to
 * twice as many between batch trims), and the test runtime's bounded mode keeps only the last
 * `retain` records. `npm run soak` measures the whole runtime over simulated days.
 */
import { describe, expect, it } from 'vitest';
import { MemoryHistory } from '../../src/adapters/store/memory/memoryHistory.js';
import { MemoryOutbox } from '../../src/adapters/store/memory/memoryOutbox.js';
import { createMemoryStore } from '../../src/adapters/store/memory/memoryStore.js';
import type { Outbox } from '../../src/ports/outbox.js';
import type { OutgoingResponse } from '../../src/ports/outgoingResponse.js';
import { createTestRuntime } from '../../src/testing/index.js';

const response = (key: string, channel = 'c'): OutgoingResponse => ({
  idempotencyKey: key,
  channel: { kind: 'test', id: channel },
  text: 'hi',
  attachments: [],
  origin: { kind: 'answer' },
  preparedAt: 0,
});

async function settleMany(outbox: Outbox, n: number): Promise<void> {
  for (let i = 1; i <= n; i++) {
    await outbox.record(response(`k${i}`), i);
    await outbox.settle(`k${i}`, { at: i, sent: true });
  }
}

describe('bounded structures', () => {
  for (const [name, make] of [
    ['MemoryOutbox', () => new MemoryOutbox({ retainSettled: 5 })],
    ['memory store outbox', () => createMemoryStore({ retainSettled: 5 }).outbox],
  ] as const) {
    it(`${name} remembers exactly the last retainSettled settled keys`, async () => {
      const outbox = make();
      await settleMany(outbox, 6);
      // k1 is past the cap: forgotten, so recording it again creates a new entry.
      expect((await outbox.record(response('k1'), 7)).created).toBe(true);
      // k2..k6 are the last five: still known as sent, so a resend is recognised.
      for (const key of ['k2', 'k3', 'k4', 'k5', 'k6'])
        expect((await outbox.record(response(key), 7)).created, key).toBe(false);
    });
  }

  it('the memory store outbox keeps the latest settled answers of every channel, however busy another is', async () => {
    const outbox = createMemoryStore({ settledPerChannel: 4 }).outbox;
    await outbox.record(response('quiet-1', 'quiet'), 0);
    await outbox.settle('quiet-1', { at: 0, sent: true });
    for (let i = 1; i <= 1_000; i++) {
      await outbox.record(response(`busy-${i}`, 'busy'), i);
      await outbox.settle(`busy-${i}`, { at: i, sent: true });
    }
    // The quiet channel's one answer is still known as sent (a restored turn is not sent again).
    expect((await outbox.get('quiet-1'))?.settled?.sent).toBe(true);
    expect((await outbox.record(response('quiet-1', 'quiet'), 1_001)).created).toBe(false);
    // The busy channel keeps its last four, with what a restored turn reads (text, parts, settlement).
    for (const key of ['busy-997', 'busy-998', 'busy-999', 'busy-1000'])
      expect(await outbox.get(key), key).toMatchObject({ response: { text: 'hi' }, settled: { sent: true } });
    expect(await outbox.get('busy-996')).toBeUndefined();
    expect(await outbox.get('busy-1')).toBeUndefined();
  });

  it('the memory store outbox never forgets an answer still being delivered', async () => {
    const outbox = createMemoryStore({ settledPerChannel: 2, retainSettled: 3 }).outbox;
    await outbox.record(response('open', 'c'), 0);
    await settleMany(outbox, 50);
    expect(await outbox.unsettled()).toEqual([expect.objectContaining({ key: 'open' })]);
  });

  it('MemoryHistory keeps exactly the last perChannel lines of a channel', async () => {
    const history = new MemoryHistory({ perChannel: 3 });
    for (let n = 1; n <= 10; n++)
      await history.append({
        channelId: 'c',
        messageId: `m${n}`,
        at: n,
        author: { kind: 'human', id: 'u', name: 'U' },
        text: `${n}`,
      });
    expect((await history.recent('c', 10)).map((e) => e.messageId)).toEqual(['m8', 'm9', 'm10']);
    expect((await history.recent('c', 2)).map((e) => e.messageId)).toEqual(['m9', 'm10']);
  });

  it('createTestRuntime({ retain }) keeps only the last records, and builds no inspection with 0', async () => {
    const bounded = createTestRuntime({ retain: 3 });
    const none = createTestRuntime({ retain: 0 });
    for (const t of [bounded, none]) {
      for (let i = 1; i <= 20; i++) t.runtime.send({ type: 'bogus', n: i } as never);
      await t.settle();
    }
    expect(bounded.errors.length).toBeGreaterThan(0);
    expect(bounded.errors.length).toBeLessThan(6);
    expect(none.errors).toEqual([]);
    expect(none.inspection).toEqual([]);
    await bounded.stop();
    await none.stop();
    for (const retain of [-1, 1.5, Number.NaN])
      expect(() => createTestRuntime({ retain })).toThrow(
        expect.objectContaining({ code: 'TROUPE_CONFIG_INVALID' }),
      );
  });
});
