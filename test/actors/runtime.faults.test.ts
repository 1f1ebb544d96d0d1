import { describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/createRuntime.js';
import { silentLogger } from '../../src/logging/logger.js';
import type { OutgoingResponse } from '../../src/ports/outgoingResponse.js';
import type { Transport, TransportMessage, TransportReceipt } from '../../src/ports/transport.js';
import {
  createTestRuntime,
  mockModel,
  RecordingTransport,
  type SimulatedClock,
} from '../../src/testing/index.js';

const room = { kind: 'test', id: 'room' };
const nova = { id: 'nova', name: 'Nova', residentIn: ['test:room'] };

/** A transport whose sends never return (they wait a simulated year), unless aborted. */
class HangingTransport implements Transport {
  readonly kind = 'test';
  readonly limits = { maxTextLength: 2000, voice: false, attachments: false };
  readonly attempts: TransportMessage[] = [];
  clock: SimulatedClock | undefined;
  async send(message: TransportMessage, signal?: AbortSignal): Promise<TransportReceipt> {
    this.attempts.push(message);
    await this.clock?.sleep(365 * 24 * 3_600_000, signal);
    return { messageId: 'too-late' };
  }
}

/** A transport that answers with whatever `receipt` gives. */
class OddReceiptTransport implements Transport {
  readonly kind = 'test';
  readonly limits = { maxTextLength: 2000, voice: false, attachments: false };
  readonly attempts: TransportMessage[] = [];
  constructor(private readonly receipt: () => unknown) {}
  async send(message: TransportMessage): Promise<TransportReceipt> {
    this.attempts.push(message);
    return this.receipt() as TransportReceipt;
  }
}

const notice = (key: string, text: string): OutgoingResponse => ({
  idempotencyKey: key,
  channel: room,
  text,
  attachments: [],
  origin: { kind: 'notice' },
  preparedAt: 0,
});

describe('a transport limit below what splitting needs', () => {
  it('is refused when the runtime is created, naming the transport', () => {
    const tiny = new RecordingTransport({ limits: { maxTextLength: 10 } });
    expect(() => createRuntime({ avatars: [nova], transports: [tiny], logger: silentLogger() })).toThrow(
      expect.objectContaining({ code: 'TROUPE_TRANSPORT_LIMIT_INVALID' }),
    );
  });

  it('set after the start, fails the reply as a typed outcome and frees the turn', async () => {
    const t = createTestRuntime({ avatars: [nova], model: mockModel('A reply long enough to split.') });
    (t.transport.limits as { maxTextLength: number }).maxTextLength = 5;
    await t.say('Nova, hello');
    expect(t.outcomes[0]).toMatchObject({ sent: false, error: { code: 'TROUPE_TRANSPORT_LIMIT_INVALID' } });
    expect(t.runtime.view(room)?.inFlight).toEqual([]);
    const entry = await t.outbox.get(t.outcomes[0]?.idempotencyKey ?? '');
    expect(entry?.settled).toMatchObject({ sent: false });
    expect(t.errors.map((e) => e.code)).toContain('TROUPE_TRANSPORT_LIMIT_INVALID');
    await t.stop();
  });

  it('set after the start, fails a response.send as a typed outcome (no unhandled rejection)', async () => {
    const t = createTestRuntime({ avatars: [nova] });
    (t.transport.limits as { maxTextLength: number }).maxTextLength = 5;
    t.runtime.send({ type: 'response.send', response: notice('up-1', 'Maintenance at noon today.') });
    await t.settle();
    expect(t.outcomes[0]).toMatchObject({ sent: false, error: { code: 'TROUPE_TRANSPORT_LIMIT_INVALID' } });
    await t.stop();
  });
});

describe('a transport that never returns', () => {
  it('times a send out (sendTimeoutMs) as a typed outcome and frees the turn', async () => {
    const hanging = new HangingTransport();
    const t = createTestRuntime({
      avatars: [nova],
      transports: [hanging],
      sendTimeoutMs: 5_000,
      retry: { maxAttempts: 1 },
    });
    hanging.clock = t.clock;
    t.runtime.send({
      type: 'channel.message',
      channel: room,
      messageId: 'm1',
      author: { kind: 'human', id: 'u1', name: 'Ann' },
      text: 'Nova, hello',
    });
    await t.advance(6_000);
    expect(t.outcomes[0]).toMatchObject({ sent: false, error: { code: 'TROUPE_TRANSPORT_TIMEOUT' } });
    expect(t.runtime.view(room)?.inFlight).toEqual([]);
    await t.stop();
  });

  it('does not hold stop() past its deadline: the reply stays unsettled in the outbox for the next start', async () => {
    const hanging = new HangingTransport();
    const t = createTestRuntime({ avatars: [nova], transports: [hanging], sendTimeoutMs: 600_000 });
    hanging.clock = t.clock;
    t.runtime.send({
      type: 'channel.message',
      channel: room,
      messageId: 'm1',
      author: { kind: 'human', id: 'u1', name: 'Ann' },
      text: 'Nova, hello',
    });
    await t.advance(10);
    expect(hanging.attempts).toHaveLength(1);
    const stopped = t.runtime.stop({ deadlineMs: 2_000 });
    await t.advance(2_500);
    await stopped;
    const unsettled = await t.outbox.unsettled();
    expect(unsettled.map((e) => e.response.text)).toHaveLength(1);
  });
});

describe('a model reply of any size', () => {
  it('is clipped to TROUPE_MAX_REPLY_CHARS at a sentence boundary before it is sent', async () => {
    const sentence = 'This sentence is one of very many. ';
    const huge = sentence.repeat(150_000); // about 5 MB
    const t = createTestRuntime({ avatars: [nova], model: mockModel(huge) });
    await t.say('Nova, tell me everything');
    const texts = t.transport.texts();
    const total = texts.join('').length;
    expect(texts.length).toBeLessThanOrEqual(3);
    expect(total).toBeLessThanOrEqual(4_000);
    expect(total).toBeGreaterThan(1_000);
    expect(texts.at(-1)?.trimEnd()).toMatch(/many\.$|…$/);
    await t.stop();
  });
});

describe('a transport that returns nothing usable', () => {
  it('is recorded as unknown whether sent, reported, and not sent again blindly', async () => {
    for (const receipt of [() => undefined, () => ({}), () => ({ messageId: 42 }), () => 'ok']) {
      const odd = new OddReceiptTransport(receipt);
      const t = createTestRuntime({ avatars: [nova], transports: [odd] });
      await t.say('Nova, hello');
      expect(odd.attempts).toHaveLength(1);
      expect(t.outcomes[0]).toMatchObject({ sent: false, error: { code: 'TROUPE_TRANSPORT_UNCONFIRMED' } });
      const entry = await t.outbox.get(t.outcomes[0]?.idempotencyKey ?? '');
      expect(entry?.settled).toMatchObject({ sent: false, error: { code: 'TROUPE_TRANSPORT_UNCONFIRMED' } });
      expect(await t.outbox.unsettled()).toEqual([]);
      await t.stop();
    }
  });
});

describe('errors$ carries model and transport failures', () => {
  it('with the channel and the code', async () => {
    const failing = mockModel(Object.assign(new Error('down'), { statusCode: 503 }));
    const t = createTestRuntime({ avatars: [nova], model: failing });
    await t.say('Nova, hello');
    const modelError = t.errors.find((e) => e.code.startsWith('TROUPE_MODEL_'));
    expect(modelError?.details).toMatchObject({ channel: room });
    await t.stop();

    const u = createTestRuntime({ avatars: [nova] });
    u.transport.failNext({ code: 'TROUPE_TRANSPORT_FORBIDDEN', retryable: false });
    await u.say('Nova, hello');
    const transportError = u.errors.find((e) => e.code === 'TROUPE_TRANSPORT_FORBIDDEN');
    expect(transportError?.details).toMatchObject({ channel: room });
    await u.stop();
  });
});
