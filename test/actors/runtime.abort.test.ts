import { describe, expect, it } from 'vitest';
import { createMemoryStore } from '../../src/adapters/store/memory/memoryStore.js';
import type {
  Transport,
  TransportLimits,
  TransportMessage,
  TransportReceipt,
} from '../../src/ports/transport.js';
import { createTestRuntime, RecordingTransport } from '../../src/testing/index.js';
import { capturingLogger } from '../support/erpSpy.js';

const room = { kind: 'test', id: 'room' };
const nova = [{ id: 'nova', name: 'Nova', residentIn: ['test:room'] }];

/** A transport that never answers the first `hang` sends (it keeps their signals), then takes them. */
class HangingTransport implements Transport {
  readonly kind = 'test';
  readonly limits: TransportLimits;
  readonly signals: (AbortSignal | undefined)[] = [];
  readonly taken: TransportMessage[] = [];

  constructor(
    private hang: number,
    limits: Partial<TransportLimits> = {},
  ) {
    this.limits = { maxTextLength: 2000, voice: false, attachments: false, ...limits };
  }

  send(message: TransportMessage, signal?: AbortSignal): Promise<TransportReceipt> {
    this.signals.push(signal);
    if (this.hang > 0) {
      this.hang -= 1;
      return new Promise(() => {});
    }
    this.taken.push(message);
    return Promise.resolve({ messageId: `hang-${this.taken.length}` });
  }
}

/** Lets every promise and I/O callback that can run without time moving run. */
/** Calls `stop` with a deadline; `returned()` tells whether it has returned yet. */
function watchStop(runtime: { stop(options: { deadlineMs: number }): Promise<void> }, deadlineMs: number) {
  let returned = false;
  const done = runtime.stop({ deadlineMs }).then(() => {
    returned = true;
  });
  return { done, returned: () => returned };
}

async function turnsOfTheLoop(n = 5): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
}

function ask(runtime: { send(event: unknown): unknown }, messageId = 'm1'): void {
  runtime.send({
    type: 'channel.message',
    channel: room,
    messageId,
    author: { kind: 'human', id: 'u1', name: 'Ada' },
    text: 'Nova, are you there?',
  });
}

describe('sends that hang', () => {
  it('a send past the transport’s timeout is aborted and retried as TROUPE_TRANSPORT_TIMEOUT', async () => {
    const transport = new HangingTransport(1, { sendTimeoutMs: 5_000 });
    const t = createTestRuntime({ avatars: nova, transports: [transport] });
    ask(t.runtime);
    await turnsOfTheLoop();
    expect(transport.signals).toHaveLength(1);
    expect(transport.signals[0]?.aborted).toBe(false);

    t.clock.advanceSync(4_999);
    await turnsOfTheLoop();
    expect(transport.signals[0]?.aborted).toBe(false);
    t.clock.advanceSync(1);
    await turnsOfTheLoop();
    expect(transport.signals[0]?.aborted).toBe(true);
    expect(transport.signals[0]?.reason).toMatchObject({ code: 'TROUPE_TRANSPORT_TIMEOUT', retryable: true });

    await t.advance(30_000); // the backoff, then the second attempt goes through
    expect(transport.taken).toHaveLength(1);
    expect(t.outcomes).toHaveLength(1);
    expect(t.outcomes[0]).toMatchObject({ sent: true, parts: [{ index: 0, attempts: 2 }] });
    await t.stop();
  });

  it('gives up after the configured attempts when every send times out (runtime option)', async () => {
    const transport = new HangingTransport(Number.POSITIVE_INFINITY);
    const t = createTestRuntime({
      avatars: nova,
      transports: [transport],
      sendTimeoutMs: 1_000,
      retry: { maxAttempts: 2, baseDelayMs: 100 },
    });
    ask(t.runtime);
    await turnsOfTheLoop();
    t.clock.advanceSync(1_000);
    await turnsOfTheLoop();
    t.clock.advanceSync(200); // the backoff
    await turnsOfTheLoop();
    t.clock.advanceSync(1_000);
    await t.settle();
    expect(transport.signals).toHaveLength(2);
    expect(transport.signals.every((s) => s?.aborted)).toBe(true);
    expect(t.outcomes).toEqual([
      expect.objectContaining({
        sent: false,
        error: expect.objectContaining({ code: 'TROUPE_TRANSPORT_TIMEOUT' }),
      }),
    ]);
    expect(t.outcomes[0]?.error?.message).toMatch(/after 2 attempts/);
    expect(await t.outbox.unsettled()).toEqual([]);
    await t.stop();
  });
});

describe('stop() with a deadline', () => {
  it('aborts a send that outlives the deadline, leaves it unsettled, and the next start sends it once', async () => {
    const store = createMemoryStore();
    const transport = new HangingTransport(Number.POSITIVE_INFINITY);
    const first = createTestRuntime({ avatars: nova, store, transports: [transport] });
    ask(first.runtime);
    await turnsOfTheLoop();
    expect(transport.signals).toHaveLength(1);

    const stopping = watchStop(first.runtime, 2_000);
    await turnsOfTheLoop();
    first.clock.advanceSync(1_999);
    await turnsOfTheLoop();
    expect(stopping.returned()).toBe(false);
    first.clock.advanceSync(1);
    await stopping.done;
    expect(transport.signals[0]?.aborted).toBe(true);
    expect(transport.signals[0]?.reason).toMatchObject({ code: 'TROUPE_TRANSPORT_ABORTED' });
    const unsettled = await store.outbox.unsettled();
    expect(unsettled).toHaveLength(1);
    expect(unsettled[0]?.response.replyTo).toEqual({ messageId: 'm1' });
    // The turn is still in flight in the stored floor: it is settled by the resend, not spent now.
    expect(first.outcomes.map((o) => o.error?.code)).toEqual(['TROUPE_TRANSPORT_ABORTED']);

    const recording = new RecordingTransport();
    const second = createTestRuntime({
      avatars: nova,
      store,
      transports: [recording],
      startAt: first.clock.now(),
    });
    await second.settle();
    expect(recording.sent).toHaveLength(1);
    expect(recording.sent[0]?.replyTo).toEqual({ messageId: 'm1' });
    expect(await store.outbox.unsettled()).toEqual([]);
    expect(second.runtime.view(room)?.inFlight).toEqual([]);
    // The message is not answered again.
    await second.say('Nova, are you there?', { messageId: 'm1' });
    expect(recording.sent).toHaveLength(1);
    await second.stop();
  });

  it('gives up on a store that does not take its last writes: past the deadline and 10 s more, it says what may be lost and returns', async () => {
    const memory = createMemoryStore();
    const state = { hang: false };
    const failLater: ((error: Error) => void)[] = [];
    const never = () =>
      new Promise<never>((_resolve, reject) => {
        failLater.push(reject);
      });
    // The memory store, whose document writes never answer once `hang` is set (a server that stopped answering).
    const documents = new Proxy(memory.documents, {
      get: (target, name, receiver) =>
        state.hang && (name === 'put' || name === 'putMany' || name === 'batch')
          ? never
          : Reflect.get(target, name, receiver),
    });
    const { logger, lines } = capturingLogger();
    const t = createTestRuntime({ avatars: nova, store: { ...memory, documents }, logger });
    await t.say('Nova, are you there?');
    await t.say('Still there?');
    state.hang = true;
    const stopping = watchStop(t.runtime, 1_000);
    await turnsOfTheLoop();
    t.clock.advanceSync(10_999);
    await turnsOfTheLoop();
    expect(stopping.returned()).toBe(false); // the writes still have their time
    t.clock.advanceSync(1);
    await turnsOfTheLoop();
    expect(stopping.returned()).toBe(true);
    await stopping.done;
    const warning = lines.find((l) =>
      String(l.msg).startsWith('The runtime stopped before the store took its last writes'),
    );
    expect(warning).toMatchObject({ level: 40, waitedMs: 11_000 });
    // The store fails them at last, long after: nobody waits, nothing is left unhandled.
    for (const reject of failLater) reject(new Error('connection reset'));
    await turnsOfTheLoop();
  });

  it('resolves at once when nothing is in flight, and waits for work that finishes before the deadline', async () => {
    const transport = new HangingTransport(0);
    const t = createTestRuntime({ avatars: nova, transports: [transport] });
    await t.say('Nova, are you there?');
    await t.runtime.stop({ deadlineMs: 0 });
    expect(transport.taken).toHaveLength(1);
    expect(await t.outbox.unsettled()).toEqual([]);
  });
});
