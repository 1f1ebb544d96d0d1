import { describe, expect, expectTypeOf, it } from 'vitest';
import { RoutingActor } from '../../src/actors/routingActor.js';
import { MemoryOutbox } from '../../src/adapters/store/memory/memoryOutbox.js';
import { type PreparationRequest, prepareOutgoingResponse } from '../../src/delivery/preparation.js';
import { silentLogger } from '../../src/logging/logger.js';
import type { OutgoingResponse } from '../../src/ports/outgoingResponse.js';
import type { SpeechSynthesizer } from '../../src/ports/speech.js';
import { TroupeError } from '../../src/ports/troupeError.js';
import { createTestRuntime, mockModel, RecordingTransport, SimulatedClock } from '../../src/testing/index.js';

/** A ready response in `test:room` (a notice prepared at 0), with what a test changes. */
function responseOf(
  idempotencyKey: string,
  text: string,
  changes: Partial<OutgoingResponse> = {},
): OutgoingResponse {
  return {
    idempotencyKey,
    channel: { kind: 'test', id: 'room' },
    text,
    attachments: [],
    origin: { kind: 'notice' },
    preparedAt: 0,
    ...changes,
  };
}

const request: PreparationRequest = {
  idempotencyKey: 'k1',
  channel: { kind: 'test', id: 'room' },
  origin: { turnId: 't1', avatarId: 'nova' },
  voicePolicy: { mode: 'on-request' },
  at: 0,
};

describe('preparation', () => {
  it('given an existing response, it leaves it alone whatever the model wrote', () => {
    const existing: OutgoingResponse = responseOf('upstream', 'decided upstream', { preparedAt: 5 });
    const prepared = prepareOutgoingResponse({
      existing,
      generation: { text: 'the model said something else' },
      error: { code: 'TROUPE_MODEL_TIMEOUT' },
      request,
    });
    expect(prepared).toBe(existing);
  });

  it('given a generation error, it makes a user-friendly message and never shows the raw error', () => {
    const prepared = prepareOutgoingResponse({ error: { code: 'TROUPE_MODEL_TIMEOUT' }, request });
    expect(prepared?.origin.kind).toBe('error');
    expect(prepared?.text).toMatch(/took too long/);
    const generic = prepareOutgoingResponse({ error: { code: 'SOMETHING_ELSE' }, request });
    expect(generic?.text).toBe('Something went wrong while I was writing my reply. Please try again.');
  });

  it('given a [voice] prefix, it strips it and asks for speech under the on-request policy', () => {
    const prepared = prepareOutgoingResponse({ generation: { text: '[voice] Hello *there*' }, request });
    expect(prepared?.text).toBe('Hello *there*');
    expect(prepared?.voice).toEqual({ text: 'Hello there' });
    const off = prepareOutgoingResponse({
      generation: { text: '[voice] Hello' },
      request: { ...request, voicePolicy: { mode: 'off' } },
    });
    expect(off?.voice).toBeUndefined();
  });

  it("drops a label with the speaker's own name, before or after the [voice] prefix, whatever model wrote it", () => {
    const named = { ...request, speakerNames: ['Nova', 'Novie'] };
    const spoken = prepareOutgoingResponse({
      generation: { text: '[Voice]  Nova: Twinkle!' },
      request: named,
    });
    expect(spoken?.text).toBe('Twinkle!');
    expect(spoken?.voice).toEqual({ text: 'Twinkle!' });
    const aliased = prepareOutgoingResponse({
      generation: { text: '**novie:** [voice] hi' },
      request: named,
    });
    expect([aliased?.text, aliased?.voice?.text]).toEqual(['hi', 'hi']);
    const other = prepareOutgoingResponse({ generation: { text: 'Rex: hi' }, request: named });
    expect([other?.text, other?.voice]).toEqual(['Rex: hi', undefined]);
  });

  it('given only a [voice] prefix, it prepares nothing (the feedback guarantee decides)', () => {
    expect(prepareOutgoingResponse({ generation: { text: ' [voice] ' }, request })).toBeUndefined();
  });

  it('given blank model output, it prepares nothing', () => {
    expect(prepareOutgoingResponse({ generation: { text: '   ' }, request })).toBeUndefined();
  });
});

describe('the delivery pipeline', () => {
  it('answers a mention through preparation and routing and records the reply in history', async () => {
    const t = createTestRuntime();
    await t.summon('nova');
    const greeting = t.transport.sent.length;
    const asked = await t.say('Nova, what is that bright comet?');
    const reply = t.transport.sent[greeting];
    expect(reply?.speaker?.name).toBe('Nova');
    expect(reply?.replyTo).toEqual({ messageId: asked });
    const lines = (await t.history.all('test:room')).map((e) => `${e.author.name}: ${e.text}`);
    expect(lines).toContain('Ada: Nova, what is that bright comet?');
    expect(lines).toContain(`Nova: ${reply?.text}`);
    expect(t.outcomes.every((o) => o.sent)).toBe(true);
    await t.stop();
  });

  it('takes off a speaker label with any of the avatar’s names before sending', async () => {
    const model = mockModel(() => '**Novie:** Hello there!');
    const t = createTestRuntime({
      avatars: [{ id: 'nova', name: 'Nova', aliases: ['Novie'], residentIn: ['test:room'] }],
      model,
    });
    await t.say('Nova?');
    expect(t.transport.texts()).toEqual(['Hello there!']);
    await t.stop();
  });

  it('on a generation error, the person gets a friendly error and the turn is released, not spent', async () => {
    const model = mockModel(
      () => new TroupeError('TROUPE_MODEL_TIMEOUT', 'provider said: socket hang up at X.ts:12'),
    );
    const t = createTestRuntime({
      model,
      avatars: [{ id: 'nova', name: 'Nova', residentIn: ['test:room'] }],
    });
    await t.say('Nova, are you there?');
    expect(t.transport.texts()).toEqual([
      'Sorry, I took too long to think that through. Could you ask me again in a moment?',
    ]);
    expect(t.transport.texts().join()).not.toMatch(/socket|\.ts:/);
    expect(t.outcomes[0]?.origin.kind).toBe('error');
    expect(t.runtime.view({ kind: 'test', id: 'room' })?.inFlight).toEqual([]);
    expect((await t.history.all('test:room')).map((e) => e.author.id)).toEqual(['u1']);
    await t.stop();
  });

  it('when a person asked and the model wrote nothing, the guarantee answers without touching history', async () => {
    const model = mockModel(() => '');
    const t = createTestRuntime({
      model,
      avatars: [{ id: 'nova', name: 'Nova', residentIn: ['test:room'] }],
    });
    await t.say('Nova?');
    expect(t.transport.texts()).toEqual([
      "I'm here, but I couldn't put a reply together just now. Please try again.",
    ]);
    expect(t.inspection).toContainEqual(
      expect.objectContaining({ type: 'response.prepared', guaranteed: true }),
    );
    expect(await t.history.all('test:room')).toHaveLength(1); // only Ada's message
    await t.stop();
  });

  it('an autonomous turn (a greeting) that comes out empty stays silent', async () => {
    const model = mockModel(() => ' ');
    const t = createTestRuntime({ model });
    await t.summon('nova');
    expect(t.transport.sent).toEqual([]);
    expect(t.inspection).toContainEqual(expect.objectContaining({ type: 'turn.silent', avatarId: 'nova' }));
    await t.stop();
  });

  it('a failed send is recorded in the outbox and reported, and the turn is released', async () => {
    const t = createTestRuntime({ avatars: [{ id: 'nova', name: 'Nova', residentIn: ['test:room'] }] });
    t.transport.failNext({ code: 'TROUPE_TRANSPORT_FORBIDDEN', retryable: false });
    await t.say('Nova, hello');
    const outcome = t.outcomes[0];
    expect(outcome).toMatchObject({
      attempted: true,
      sent: false,
      error: { code: 'TROUPE_TRANSPORT_FORBIDDEN' },
    });
    const entry = await t.outbox.get(outcome?.idempotencyKey ?? '');
    expect(entry?.settled).toMatchObject({ sent: false, error: { code: 'TROUPE_TRANSPORT_FORBIDDEN' } });
    expect(t.runtime.view({ kind: 'test', id: 'room' })?.inFlight).toEqual([]);
    await t.stop();
  });

  it('retries a retryable failure after the platform’s retry-after, then succeeds', async () => {
    const t = createTestRuntime({ avatars: [{ id: 'nova', name: 'Nova', residentIn: ['test:room'] }] });
    t.transport.failNext({ code: 'TROUPE_TRANSPORT_RATE_LIMITED', retryable: true, retryAfterMs: 2000 });
    await t.say('Nova, hello');
    expect(t.transport.sent).toHaveLength(0);
    await t.advance(1999);
    expect(t.transport.sent).toHaveLength(0);
    await t.advance(1);
    expect(t.transport.sent).toHaveLength(1);
    expect(t.outcomes[0]).toMatchObject({ sent: true, parts: [{ attempts: 2 }] });
    await t.stop();
  });

  it('gives up after the configured attempts with backoff and says so', async () => {
    const t = createTestRuntime({
      avatars: [{ id: 'nova', name: 'Nova', residentIn: ['test:room'] }],
      retry: { maxAttempts: 3, baseDelayMs: 100 },
    });
    t.transport.failNext({ retryable: true, times: 5 });
    await t.say('Nova, hello');
    await t.advance(10_000);
    expect(t.transport.attempts).toHaveLength(3);
    expect(t.outcomes[0]?.error?.message).toMatch(/after 3 attempts/);
    await t.stop();
  });

  it('splits a long answer to the transport’s limit, in order, replying with the first part only', async () => {
    const long = Array.from({ length: 40 }, (_, i) => `Sentence number ${i} is here.`).join(' ');
    const transport = new RecordingTransport({ limits: { maxTextLength: 200 } });
    const t = createTestRuntime({
      model: mockModel(() => long),
      transports: [transport],
      avatars: [{ id: 'nova', name: 'Nova', residentIn: ['test:room'] }],
    });
    await t.say('Nova, tell me everything');
    expect(transport.sent.length).toBeGreaterThan(5);
    expect(transport.sent.every((m) => (m.text?.length ?? 0) <= 200)).toBe(true);
    expect(transport.sent.map((m) => m.text).join(' ')).toBe(long);
    expect(transport.sent.filter((m) => m.replyTo)).toHaveLength(1);
    await t.stop();
  });

  it('speaks when the voice policy says so, and sends the text when speech fails', async () => {
    const speech: SpeechSynthesizer & { fail: boolean } = {
      id: 'test:speech',
      fail: false,
      async synthesize({ text }) {
        if (this.fail) throw new TroupeError('TROUPE_SPEECH_FAILED', 'no voice today', { retryable: true });
        return { audio: new TextEncoder().encode(text), mediaType: 'audio/wav', extension: 'wav' };
      },
    };
    const t = createTestRuntime({
      speech,
      model: mockModel(() => 'Hello from the stars'),
      avatars: [{ id: 'nova', name: 'Nova', voice: 'always', residentIn: ['test:room'] }],
    });
    await t.say('Nova, say hi');
    expect(t.transport.sent[0]?.attachments?.[0]).toMatchObject({
      name: 'voice.wav',
      mediaType: 'audio/wav',
    });
    expect(t.transport.sent[0]?.text).toBe('Hello from the stars');
    speech.fail = true;
    await t.advance(60_000);
    await t.say('Nova, again');
    expect(t.transport.sent[1]?.attachments).toBeUndefined();
    expect(t.transport.sent[1]?.text).toBe('Hello from the stars');
    expect(t.outcomes[1]?.voiceFellBackToText).toBe(true);
    await t.stop();
  });

  it('answers a voice note in kind under the on-request policy', async () => {
    const speech: SpeechSynthesizer = {
      id: 'test:speech',
      async synthesize() {
        return { audio: new Uint8Array([1, 2, 3]), mediaType: 'audio/wav', extension: 'wav' };
      },
    };
    const t = createTestRuntime({
      speech,
      avatars: [{ id: 'nova', name: 'Nova', residentIn: ['test:room'] }],
    });
    await t.say('Nova, can you hear me?', { voice: true });
    expect(t.transport.sent[0]?.attachments?.[0]?.mediaType).toBe('audio/wav');
    await t.stop();
  });

  it('delivers a response an upstream system prepared exactly as given', async () => {
    const t = createTestRuntime();
    const response: OutgoingResponse = responseOf('upstream-1', 'Maintenance at noon.');
    t.runtime.send({ type: 'response.send', response });
    t.runtime.send({ type: 'response.send', response }); // joins the delivery in progress
    await t.settle();
    t.runtime.send({ type: 'response.send', response }); // already settled: not sent again
    await t.settle();
    expect(t.transport.texts()).toEqual(['Maintenance at noon.']);
    expect(t.outcomes.map((o) => o.duplicate)).toEqual([false, true]);
    await t.stop();
  });
});

describe('routing is transport only', () => {
  it('takes nothing but an OutgoingResponse', () => {
    expectTypeOf<RoutingActor['route']>().parameters.toEqualTypeOf<[OutgoingResponse]>();
  });

  it('rejects what is not an OutgoingResponse without sending, and says why', async () => {
    const transport = new RecordingTransport();
    const routing = new RoutingActor({
      transports: [transport],
      outbox: new MemoryOutbox(),
      clock: new SimulatedClock(),
      logger: silentLogger(),
    });
    const modelOutput = { text: 'raw model output', usage: { inputTokens: 3 } };
    const outcome = await routing.route(modelOutput as unknown as OutgoingResponse);
    expect(outcome).toMatchObject({
      attempted: false,
      sent: false,
      error: { code: 'TROUPE_RESPONSE_INVALID' },
    });
    expect(transport.attempts).toEqual([]);
  });

  it('reports a missing transport as a typed outcome', async () => {
    const routing = new RoutingActor({
      transports: [],
      outbox: new MemoryOutbox(),
      clock: new SimulatedClock(),
      logger: silentLogger(),
    });
    const outcome = await routing.route(responseOf('k', 'hi', { channel: { kind: 'discord', id: '1' } }));
    expect(outcome.error?.code).toBe('TROUPE_TRANSPORT_MISSING');
    expect(outcome.error?.message).toMatch(/createRuntime\(\{ transports \}\)/);
  });
});

describe('the outbox across a crash', () => {
  it('resends an entry recorded but not settled exactly once, even if its part had gone out', async () => {
    const outbox = new MemoryOutbox();
    const transport = new RecordingTransport();
    const response: OutgoingResponse = responseOf('before-crash', 'I was about to say this.', {
      origin: { kind: 'answer', turnId: 't1', avatarId: 'nova' },
    });
    // The process recorded the response and the transport took it, then the process died before
    // noting the part or settling.
    await outbox.record(response, 0);
    await transport.send({
      idempotencyKey: 'before-crash#0',
      channelId: 'room',
      text: response.text as string,
    });

    const t = createTestRuntime({ outbox, transports: [transport] });
    await t.settle();
    expect(transport.sent).toHaveLength(1);
    expect(transport.attempts).toHaveLength(2);
    expect((await outbox.get('before-crash'))?.settled?.sent).toBe(true);
    expect(await outbox.unsettled()).toEqual([]);

    // A second restart finds nothing to resend.
    const again = createTestRuntime({ outbox, transports: [transport] });
    await again.settle();
    expect(transport.attempts).toHaveLength(2);
    await t.stop();
    await again.stop();
  });

  it('resumes a partly sent long response from the first part not taken', async () => {
    const outbox = new MemoryOutbox();
    const transport = new RecordingTransport({ limits: { maxTextLength: 40 } });
    const response: OutgoingResponse = responseOf(
      'half',
      'First part goes here. Second part goes here. Third part goes here.',
      { origin: { kind: 'answer' } },
    );
    await outbox.record(response, 0);
    const first = await transport.send({
      idempotencyKey: 'half#0',
      channelId: 'room',
      text: 'First part goes here.',
    });
    await outbox.markPartSent('half', { index: 0, kind: 'text', messageId: first.messageId, attempts: 1 });
    const t = createTestRuntime({ outbox, transports: [transport] });
    await t.settle();
    expect(transport.texts()).toEqual([
      'First part goes here.',
      'Second part goes here.',
      'Third part goes here.',
    ]);
    expect(transport.attempts).toHaveLength(3);
    await t.stop();
  });
});
