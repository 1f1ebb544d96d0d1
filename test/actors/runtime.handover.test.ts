import { describe, expect, it } from 'vitest';
import { HANDOVER } from '../../src/actors/handoverQueue.js';
import { createMemoryStore } from '../../src/adapters/store/memory/memoryStore.js';
import type { TroupeStore } from '../../src/ports/store.js';
import { createTestRuntime, RecordingTransport, type TestRuntime } from '../../src/testing/index.js';

const room = { kind: 'test', id: 'room' };
const avatars = [{ id: 'nova', name: 'Nova', residentIn: ['test:room'] }];
const LEASE_TTL_MS = 3_000;
const POLL_MS = LEASE_TTL_MS / 3;

/** Two runtimes ("processes") sharing one store that outlives them, on clocks started together. */
function twoRuntimes(store: TroupeStore = createMemoryStore()): [TestRuntime, TestRuntime] {
  const options = {
    avatars,
    store,
    persistence: { durable: true, leaseTtlMs: LEASE_TTL_MS },
    config: { perAvatarCooldownMs: 0 },
    startAt: 1_000_000,
  };
  return [createTestRuntime(options), createTestRuntime(options)];
}

const message = (messageId: string, person: string) => ({
  type: 'channel.message',
  channel: room,
  messageId,
  author: { kind: 'human', id: person, name: person },
  text: `Nova, a question from ${person}?`,
});

/** The messages each reply answers, in the order they were sent. */
const answered = (t: TestRuntime) => t.transport.sent.map((m) => m.replyTo?.messageId);

describe('a channel held by another process', () => {
  it('hands its events over to the holder, which answers them in order, none refused', async () => {
    const [a, b] = twoRuntimes();
    await a.say('Nova, are you there?', { messageId: 'a-0', as: { id: 'pa', name: 'Pat' } });
    expect(answered(a)).toEqual(['a-0']);

    // B does not know yet who holds the channel: it finds out while loading it, then hands over.
    expect(b.runtime.send(message('b-0', 'q0'))).toEqual({ accepted: true });
    await b.settle();
    expect(b.errors.map((e) => e.code)).toEqual([]);
    // The holder notices it at its next poll (a third of the lease) and answers it.
    await a.advance(POLL_MS);
    expect(answered(a)).toEqual(['a-0', 'b-0']);
    // Now B knows: the next ones are handed over at once, and `send` says so.
    for (const i of [1, 2, 3]) {
      expect(b.runtime.send(message(`b-${i}`, `q${i}`))).toEqual({ accepted: true, handedOver: true });
      await b.settle();
      await a.advance(POLL_MS);
    }
    expect(answered(a)).toEqual(['a-0', 'b-0', 'b-1', 'b-2', 'b-3']);
    expect(answered(b)).toEqual([]);
    expect(b.errors).toEqual([]);
    expect(a.errors).toEqual([]);
    // Handled events leave the queue.
    expect(await a.store.documents.list(HANDOVER)).toEqual([]);
    await a.stop();
    await b.stop();
  });

  it('answers once a message delivered both to the holder and handed over by the other process', async () => {
    const [a, b] = twoRuntimes();
    await a.say('Nova, hello?', { messageId: 'a-0', as: { id: 'pa', name: 'Pat' } });
    b.runtime.send(message('twice', 'q'));
    await b.settle();
    a.runtime.send(message('twice', 'q'));
    await a.settle();
    await a.advance(POLL_MS);
    await a.advance(POLL_MS);
    expect(answered(a)).toEqual(['a-0', 'twice']);
    await a.stop();
    await b.stop();
  });

  it('is taken over, with its waiting events, once the holder’s lease lapses', async () => {
    const [a, b] = twoRuntimes();
    await a.say('Nova, hello?', { messageId: 'a-0', as: { id: 'pa', name: 'Pat' } });
    // A hangs from here on (its clock stands still: it renews nothing and polls nothing).
    for (let i = 0; i < 3; i++) b.runtime.send(message(`b-${i}`, `q${i}`));
    await b.settle();
    expect(answered(b)).toEqual([]);
    await b.advance(LEASE_TTL_MS);
    await b.advance(POLL_MS);
    // Every waiting message was taken, in the order the store took them; none answered twice.
    const inbound = (await b.store.history.recent('test:room', 100)).filter((e) => e.author.kind === 'human');
    expect(inbound.map((e) => e.messageId)).toEqual(['a-0', 'b-0', 'b-1', 'b-2']);
    expect(answered(b).length).toBeGreaterThan(0);
    expect(new Set(answered(b)).size).toBe(answered(b).length);
    expect(b.errors).toEqual([]);
    expect(await b.store.documents.list(HANDOVER)).toEqual([]);
    await b.stop();
  });

  it('is not taken over by a process whose transport does not serve it; its events wait', async () => {
    const store = createMemoryStore();
    const [a, b] = twoRuntimes(store);
    // A third process, whose transport serves only its own channel (a terminal chat, say).
    const onlyOther = Object.assign(new RecordingTransport(), { serves: (id: string) => id === 'other' });
    const c = createTestRuntime({
      avatars: [{ id: 'nova', name: 'Nova', residentIn: ['test:room', 'test:other'] }],
      store,
      transports: [onlyOther],
      persistence: { durable: true, leaseTtlMs: LEASE_TTL_MS },
      config: { perAvatarCooldownMs: 0 },
      startAt: 1_000_000,
    });
    await a.say('Nova, hello?', { messageId: 'a-0', as: { id: 'pa', name: 'Pat' } });
    // C holds a channel of its own, so it looks at the hand-over queues at every poll.
    c.runtime.send({ ...message('c-0', 'qc'), channel: { kind: 'test', id: 'other' } });
    await c.settle();
    for (let i = 0; i < 3; i++) b.runtime.send(message(`b-${i}`, `q${i}`));
    await b.settle();
    // A hangs; its lease lapses while C polls.
    await c.advance(LEASE_TTL_MS);
    await c.advance(POLL_MS);
    expect(c.runtime.activeChannels()).not.toContain('test:room');
    expect(onlyOther.sent.map((m) => m.channelId)).not.toContain('room');
    expect((await store.documents.list(HANDOVER)).map((d) => d.key)).toEqual(['test:room']);
    // B, which serves it, takes it over with its events.
    await b.advance(LEASE_TTL_MS);
    await b.advance(POLL_MS);
    expect(answered(b).length).toBeGreaterThan(0);
    expect(await store.documents.list(HANDOVER)).toEqual([]);
    await b.stop();
    await c.stop();
  });

  it('refuses with TROUPE_CHANNEL_OWNED an event whose sender asked for ownership', async () => {
    const [a, b] = twoRuntimes();
    await a.say('Nova, hello?', { messageId: 'a-0', as: { id: 'pa', name: 'Pat' } });
    expect(b.runtime.send(message('b-0', 'q0'), { requireOwnership: true })).toEqual({ accepted: true });
    await b.settle();
    expect(b.errors.map((e) => [e.code, (e.details as { refusedEvents?: number }).refusedEvents])).toEqual([
      ['TROUPE_CHANNEL_OWNED', 1],
    ]);
    const result = b.runtime.send(message('b-1', 'q1'), { requireOwnership: true });
    expect(result.accepted).toBe(false);
    expect(!result.accepted && result.error.code).toBe('TROUPE_CHANNEL_OWNED');
    await a.advance(POLL_MS);
    expect(answered(a)).toEqual(['a-0']);
    await a.stop();
    await b.stop();
  });
});
