/**
 * The routing actor's promises, each as a sender sees it: what is sent, in how many parts, how
 * often a failing send is tried and how long it waits, and what an outcome says when it fails.
 */
import { describe, expect, it } from 'vitest';
import { MemoryOutbox } from '../../src/adapters/store/memory/memoryOutbox.js';
import type { OutboxEntry } from '../../src/ports/outbox.js';
import type { OutgoingResponse } from '../../src/ports/outgoingResponse.js';
import type { RoutingOutcome } from '../../src/ports/routingOutcome.js';
import type { SpeechSynthesizer } from '../../src/ports/speech.js';
import { TransportError, type TransportLimits } from '../../src/ports/transport.js';
import { TroupeError } from '../../src/ports/troupeError.js';
import { RecordingTransport } from '../../src/testing/recordingTransport.js';
import { drive, responseOf, routingWith, ScriptedTransport } from '../support/routingHarness.js';

describe('transport limits are checked when the transport is registered', () => {
  const withLimits = (limits: Partial<TransportLimits>) => () =>
    routingWith([new RecordingTransport({ kind: 'chat', limits })]);

  it('refuses a text limit too small to split into, or not a whole number, naming the transport', () => {
    for (const maxTextLength of [19, 0, 25.5, Number.NaN]) {
      expect(withLimits({ maxTextLength })).toThrowError(
        expect.objectContaining({ code: 'TROUPE_TRANSPORT_LIMIT_INVALID' }),
      );
    }
    expect(withLimits({ maxTextLength: 19 })).toThrow(
      'The "chat" transport\'s limits.maxTextLength must be a whole number of at least 20 characters (routing splits longer texts); got 19.',
    );
    expect(withLimits({ maxTextLength: 20 })).not.toThrow();
  });

  it('refuses a send timeout that is not above 0 or longer than a timer can hold', () => {
    for (const sendTimeoutMs of [0, -1, Number.NaN, Number.POSITIVE_INFINITY, 2_147_483_648])
      expect(withLimits({ sendTimeoutMs }), String(sendTimeoutMs)).toThrow(
        /The "chat" transport's limits.sendTimeoutMs must be a number of milliseconds above 0 and at most 2147483647; got /u,
      );
    expect(withLimits({ sendTimeoutMs: 2_147_483_647 })).not.toThrow();
    expect(withLimits({ sendTimeoutMs: 1 })).not.toThrow();
  });
});

describe('what is refused before anything is sent', () => {
  it('an invalid response: the outcome names each bad field', async () => {
    const transport = new RecordingTransport();
    const { routing } = routingWith([transport]);
    const outcome = await routing.route({
      ...responseOf('k', 'hi'),
      idempotencyKey: '',
      preparedAt: 'now',
    } as unknown as OutgoingResponse);
    expect(outcome.error?.code).toBe('TROUPE_RESPONSE_INVALID');
    expect(outcome.error?.message).toMatch(
      /^The response is not a valid OutgoingResponse: idempotencyKey: .+; preparedAt: .+$/u,
    );
    expect(outcome.error?.retryable).toBe(false);
    const root = await routing.route(42 as unknown as OutgoingResponse);
    expect(root.error?.message).toMatch(/: \(root\): /u);
    expect(transport.attempts).toEqual([]);
  });

  it('a response with nothing to send: told so, and never recorded as sent', async () => {
    const transport = new RecordingTransport();
    const { routing, outbox } = routingWith([transport]);
    const outcome = await routing.route(responseOf('blank', '   '));
    expect(outcome).toMatchObject({
      attempted: false,
      sent: false,
      error: {
        code: 'TROUPE_RESPONSE_EMPTY',
        message: 'The response has no text, voice or attachment to send.',
        retryable: false,
      },
    });
    expect(await outbox.get('blank')).toBeUndefined();
    expect(transport.attempts).toEqual([]);
  });

  it('an outbox that cannot record: nothing is sent, and the outcome says it may be tried again', async () => {
    const transport = new RecordingTransport();
    const outbox = new MemoryOutbox();
    outbox.record = async () => {
      throw new Error('disk full');
    };
    const { routing } = routingWith([transport], { outbox });
    const outcome = await routing.route(responseOf('k', 'hello'));
    expect(outcome.error).toEqual({
      code: 'TROUPE_OUTBOX_UNAVAILABLE',
      message: expect.stringMatching(
        /^The outbox could not record the response, so it was not sent: .*disk full/u,
      ),
      retryable: true,
    });
    expect(transport.attempts).toEqual([]);
  });

  it("an outbox briefly away: the record is tried again after the sends' backoff, and the response goes once", async () => {
    const transport = new RecordingTransport();
    const outbox = new MemoryOutbox();
    const record = outbox.record.bind(outbox);
    let calls = 0;
    outbox.record = async (response, at) => {
      calls += 1;
      if (calls <= 2)
        throw new TroupeError('TROUPE_STORE_UNAVAILABLE', 'MongoDB at db:27017 is unavailable: timed out', {
          retryable: true,
        });
      return record(response, at);
    };
    const { routing, clock } = routingWith([transport], { outbox });
    const { outcome, fired } = await drive(clock, routing.route(responseOf('k', 'hello')));
    expect(outcome).toMatchObject({ sent: true, attempted: true });
    expect(calls).toBe(3);
    expect(transport.sent.map((m) => m.text)).toEqual(['hello']);
    // Two waits on the simulated clock, the second about twice the first (500 ms base, jittered).
    expect(fired).toHaveLength(2);
    expect((await outbox.get('k'))?.settled?.sent).toBe(true);
  });

  it("an outbox away for longer: given up after the sends' attempts, nothing sent, the outcome says how often it tried", async () => {
    const transport = new RecordingTransport();
    const outbox = new MemoryOutbox();
    let calls = 0;
    outbox.record = async () => {
      calls += 1;
      throw new TroupeError('TROUPE_STORE_UNAVAILABLE', 'the store is away', { retryable: true });
    };
    const { routing, clock } = routingWith([transport], { outbox });
    const { outcome } = await drive(clock, routing.route(responseOf('k', 'hello')));
    expect(calls).toBe(4);
    expect(outcome.error).toEqual({
      code: 'TROUPE_OUTBOX_UNAVAILABLE',
      message:
        'The outbox could not record the response, so it was not sent: the store is away (after 4 attempts)',
      retryable: true,
    });
    expect(transport.attempts).toEqual([]);
  });

  it('a response already settled is not sent again; the outcome says it is a duplicate', async () => {
    const transport = new RecordingTransport();
    const { routing } = routingWith([transport]);
    const first = await routing.route(responseOf('once', 'hello'));
    const again = await routing.route(responseOf('once', 'hello'));
    expect(first).toMatchObject({ sent: true, duplicate: false, attempted: true });
    expect(again).toMatchObject({ sent: true, duplicate: true, attempted: false, parts: first.parts });
    expect(transport.attempts).toHaveLength(1);
  });
});

describe('how a response is cut into messages', () => {
  it('long text goes out in parts under the limit, in order; the reply reference only on the first, the speaker on all', async () => {
    const transport = new RecordingTransport({ limits: { maxTextLength: 40 } });
    const { routing } = routingWith([transport]);
    const words = Array.from({ length: 18 }, (_, i) => `word${i}`).join(' ');
    const speaker = { avatarId: 'nova', name: 'Nova' };
    const outcome = await routing.route(responseOf('long', words, { replyTo: { messageId: 'm1' }, speaker }));
    expect(outcome.sent).toBe(true);
    const sent = transport.sent;
    expect(sent.length).toBeGreaterThan(2);
    expect(sent.map((m) => m.idempotencyKey)).toEqual(sent.map((_, i) => `long#${i}`));
    expect(sent.every((m) => (m.text ?? '').length <= 40)).toBe(true);
    expect(sent.map((m) => m.text).join(' ')).toBe(words);
    expect(sent[0]?.replyTo).toEqual({ messageId: 'm1' });
    expect(sent.slice(1).every((m) => m.replyTo === undefined)).toBe(true);
    expect(sent.every((m) => m.speaker?.name === 'Nova' && m.channelId === 'room')).toBe(true);
    expect(outcome.parts.map((p) => [p.index, p.kind, p.attempts])).toEqual(
      sent.map((_, i) => [i, 'text', 1]),
    );
    expect(outcome.parts.map((p) => p.messageId)).toEqual(sent.map((m) => m.messageId));
  });

  it('attachments ride on the first message; alone they are an attachment part, and audio is a voice part', async () => {
    const transport = new RecordingTransport();
    const { routing } = routingWith([transport]);
    const file = { name: 'a.txt', mediaType: 'text/plain', dataBase64: Buffer.from('hi').toString('base64') };
    const link = { name: 'b.png', mediaType: 'image/png', url: 'https://example.com/b.png' };
    const withText = await routing.route(responseOf('t', 'see attached', { attachments: [file, link] }));
    expect(withText.parts.map((p) => p.kind)).toEqual(['text']);
    const first = transport.sent[0];
    expect(first?.attachments?.map((a) => [a.name, a.mediaType, a.data?.toString(), a.url])).toEqual([
      ['a.txt', 'text/plain', 'hi', undefined],
      ['b.png', 'image/png', undefined, 'https://example.com/b.png'],
    ]);
    const alone = await routing.route(responseOf('a', undefined, { attachments: [file] }));
    expect(alone.parts.map((p) => p.kind)).toEqual(['attachment']);
    expect(transport.sent[1]?.text).toBeUndefined();
    const audio = { name: 'v.ogg', mediaType: 'audio/ogg', dataBase64: 'AAAA' };
    const voice = await routing.route(responseOf('v', undefined, { attachments: [audio] }));
    expect(voice.parts.map((p) => p.kind)).toEqual(['voice']);
  });

  it('a transport that takes no attachments gets the text, with each file named (and linked when it has a link)', async () => {
    const transport = new RecordingTransport({ limits: { attachments: false } });
    const { routing } = routingWith([transport]);
    const file = { name: 'a.txt', mediaType: 'text/plain', dataBase64: 'aGk=' };
    const linked = {
      name: 'q3\nreport.pdf',
      mediaType: 'application/pdf',
      url: 'https://files.example/q3.pdf',
    };
    const outcome = await routing.route(responseOf('t', 'text only', { attachments: [file, linked] }));
    expect(outcome.sent).toBe(true);
    expect(transport.sent.map((m) => [m.text, m.attachments])).toEqual([
      [
        'text only\n[file not shown here: a.txt (text/plain)]\n[file: q3 report.pdf: https://files.example/q3.pdf]',
        undefined,
      ],
    ]);
  });
});

describe('voice', () => {
  const speech = (fail: boolean): SpeechSynthesizer & { asked: unknown[] } => {
    const asked: unknown[] = [];
    return {
      id: 'test:speech',
      asked,
      async synthesize(request) {
        asked.push(request);
        if (fail) throw new Error('no voice today');
        return { audio: new Uint8Array([1, 2, 3]), mediaType: 'audio/ogg', extension: 'ogg' };
      },
    };
  };

  it('is spoken and sent as an audio file named for its format, with the voice asked for', async () => {
    const transport = new RecordingTransport();
    const voice = speech(false);
    const { routing } = routingWith([transport], { speech: voice });
    const outcome = await routing.route(
      responseOf('v', undefined, { voice: { text: 'Hello there', voiceId: 'alto' } }),
    );
    expect(outcome).toMatchObject({ sent: true, voiceFellBackToText: false });
    expect(voice.asked).toEqual([{ text: 'Hello there', voiceId: 'alto' }]);
    expect(outcome.parts.map((p) => p.kind)).toEqual(['voice']);
    const [message] = transport.sent;
    expect(message?.attachments?.map((a) => [a.name, a.mediaType, [...(a.data ?? [])]])).toEqual([
      ['voice.ogg', 'audio/ogg', [1, 2, 3]],
    ]);
    expect(message?.text).toBeUndefined();
  });

  it('with a file attached, the file rides on the spoken message, which counts as a voice part', async () => {
    const transport = new RecordingTransport();
    const { routing } = routingWith([transport], { speech: speech(false) });
    const file = { name: 'notes.txt', mediaType: 'text/plain', dataBase64: 'aGk=' };
    const outcome = await routing.route(
      responseOf('vf', undefined, { voice: { text: 'Here you go' }, attachments: [file] }),
    );
    expect(outcome.parts.map((p) => p.kind)).toEqual(['voice']);
    expect(transport.sent[0]?.attachments?.map((a) => a.name)).toEqual(['voice.ogg', 'notes.txt']);
  });

  it('falls back to its text when speech fails, when the transport takes no voice, or when there is no speech', async () => {
    const failing = new RecordingTransport();
    const a = await routingWith([failing], { speech: speech(true) }).routing.route(
      responseOf('v1', undefined, { voice: { text: 'Said instead' } }),
    );
    const mute = new RecordingTransport({ limits: { voice: false } });
    const voice = speech(false);
    const b = await routingWith([mute], { speech: voice }).routing.route(
      responseOf('v2', undefined, { voice: { text: 'Said instead' } }),
    );
    const none = new RecordingTransport();
    const c = await routingWith([none]).routing.route(
      responseOf('v3', 'Written', { voice: { text: 'Spoken' } }),
    );
    for (const outcome of [a, b, c]) expect(outcome).toMatchObject({ sent: true, voiceFellBackToText: true });
    expect(voice.asked).toEqual([]);
    expect(failing.texts()).toEqual(['Said instead']);
    expect(mute.texts()).toEqual(['Said instead']);
    // The written text wins over the spoken one when both are there.
    expect(none.texts()).toEqual(['Written']);
    expect(none.sent[0]?.attachments).toBeUndefined();
  });
});

describe('a failing send', () => {
  it('is tried again with growing, spread-out waits, up to the policy’s attempts, and says how many it took', async () => {
    const transport = new RecordingTransport().failNext({ times: 10 });
    const { routing, clock } = routingWith([transport], {
      retry: { maxAttempts: 4, baseDelayMs: 1_000, maxDelayMs: 60_000 },
    });
    const { outcome, fired } = await drive(clock, routing.route(responseOf('r', 'hello')));
    expect(transport.attempts).toHaveLength(4);
    expect(outcome.error).toEqual({
      code: 'TROUPE_TRANSPORT_UNAVAILABLE',
      message: 'injected failure (after 4 attempts)',
      retryable: true,
    });
    const waits = fired.map((t, i) => t - (fired[i - 1] ?? 0));
    expect(waits).toHaveLength(3);
    waits.forEach((wait, i) => {
      const exp = 1_000 * 2 ** i;
      expect(wait).toBeGreaterThanOrEqual(exp * 0.75);
      expect(wait).toBeLessThan(exp * 1.25);
    });
    // The same key waits the same on a replay.
    const again = routingWith([new RecordingTransport().failNext({ times: 10 })], {
      retry: { maxAttempts: 4, baseDelayMs: 1_000, maxDelayMs: 60_000 },
    });
    expect((await drive(again.clock, again.routing.route(responseOf('r', 'hello')))).fired).toEqual(fired);
  });

  it('succeeds on a later attempt, and the part records how many attempts it took', async () => {
    const transport = new RecordingTransport().failNext({ times: 2 });
    const { routing, clock } = routingWith([transport]);
    const { outcome } = await drive(clock, routing.route(responseOf('r', 'hello')));
    expect(outcome.sent).toBe(true);
    expect(outcome.parts.map((p) => p.attempts)).toEqual([3]);
  });

  it('waits what the platform asks, capped at the longest wait', async () => {
    const hinted = new RecordingTransport().failNext({ retryAfterMs: 7_000 });
    const a = routingWith([hinted]);
    expect((await drive(a.clock, a.routing.route(responseOf('h', 'x')))).fired).toEqual([7_000]);
    const zero = new RecordingTransport().failNext({ retryAfterMs: 0 });
    const z = routingWith([zero]);
    expect((await drive(z.clock, z.routing.route(responseOf('h', 'x')))).fired).toEqual([0]);
    const long = new RecordingTransport().failNext({ retryAfterMs: 600_000 });
    const b = routingWith([long], { retry: { maxDelayMs: 9_000 } });
    expect((await drive(b.clock, b.routing.route(responseOf('h', 'x')))).fired).toEqual([9_000]);
  });

  it('is not tried again when the error says it would not help; the message is the transport’s', async () => {
    const transport = new RecordingTransport().failNext({
      code: 'TROUPE_TRANSPORT_FORBIDDEN',
      retryable: false,
    });
    const { routing, clock } = routingWith([transport]);
    const { outcome, fired } = await drive(clock, routing.route(responseOf('n', 'hello')));
    expect(fired).toEqual([]);
    expect(transport.attempts).toHaveLength(1);
    expect(outcome.error).toEqual({
      code: 'TROUPE_TRANSPORT_FORBIDDEN',
      message: 'injected failure',
      retryable: false,
    });
  });

  it('a transport that throws something else fails the send once, with what it threw', async () => {
    const transport = new ScriptedTransport(async () => {
      throw new Error('socket hang up');
    });
    const { routing, clock } = routingWith([transport]);
    const { outcome } = await drive(clock, routing.route(responseOf('x', 'hello')));
    expect(transport.messages).toHaveLength(1);
    expect(outcome.error).toEqual({
      code: 'TROUPE_TRANSPORT_FAILED',
      message: expect.stringMatching(/^The transport failed unexpectedly: .*socket hang up/u),
      retryable: false,
    });
  });

  it('a send that returns no message id is not sent again: it may have gone out', async () => {
    for (const [receipt, says] of [
      [undefined, 'returned nothing'],
      [{}, 'returned no message id'],
      [{ messageId: '' }, 'returned no message id'],
      [{ messageId: 7 }, 'returned no message id'],
    ] as const) {
      const transport = new ScriptedTransport(async () => receipt);
      const { routing, clock } = routingWith([transport]);
      const { outcome } = await drive(clock, routing.route(responseOf('u', 'hello')));
      expect(transport.messages).toHaveLength(1);
      expect(outcome.error?.code).toBe('TROUPE_TRANSPORT_UNCONFIRMED');
      expect(outcome.error?.message).toContain(`The "test" transport ${says} for a send`);
      expect(outcome.error?.retryable).toBe(false);
    }
  });

  it('a retried send that returns no message id is unconfirmed too', async () => {
    const transport = new ScriptedTransport(async (n) => {
      if (n === 1) throw new TransportError('TROUPE_TRANSPORT_UNAVAILABLE', 'busy', { retryable: true });
      return {};
    });
    const { routing, clock } = routingWith([transport]);
    const { outcome } = await drive(clock, routing.route(responseOf('u', 'hello')));
    expect(transport.messages).toHaveLength(2);
    expect(outcome.error?.code).toBe('TROUPE_TRANSPORT_UNCONFIRMED');
  });
});

describe('a send that never answers', () => {
  it('is aborted at the send timeout and tried again; the message says how long it waited', async () => {
    const transport = new ScriptedTransport(() => new Promise(() => undefined));
    const { routing, clock } = routingWith([transport], {
      sendTimeoutMs: 1_500,
      retry: { maxAttempts: 2, baseDelayMs: 100 },
    });
    const { outcome, fired } = await drive(clock, routing.route(responseOf('slow', 'hello')));
    expect(transport.messages).toHaveLength(2);
    expect(fired[0]).toBe(1_500);
    expect(transport.signals[0]?.aborted).toBe(true);
    expect(outcome.error).toEqual({
      code: 'TROUPE_TRANSPORT_TIMEOUT',
      message: 'The transport did not answer within 1500 ms; the send was aborted. (after 2 attempts)',
      retryable: true,
    });
    expect(routing.sendsInFlight).toBe(0);
    expect(clock.pending).toBe(0);
  });

  it('the transport’s own timeout wins over routing’s', async () => {
    const transport = new ScriptedTransport(() => new Promise(() => undefined), { sendTimeoutMs: 400 });
    const { routing, clock } = routingWith([transport], {
      sendTimeoutMs: 10_000,
      retry: { maxAttempts: 1 },
    });
    const { outcome, fired } = await drive(clock, routing.route(responseOf('slow', 'hello')));
    expect(fired).toEqual([400]);
    expect(outcome.error?.message).toContain('within 400 ms');
  });

  it('two sends started together time out together; one that answers in time is kept', async () => {
    let n = 0;
    const transport = new ScriptedTransport(
      (_, m) =>
        new Promise((resolve) => {
          n += 1;
          if (m.channelId === 'fast') resolve({ messageId: `ok-${n}` });
        }),
    );
    const { routing, clock } = routingWith([transport], { sendTimeoutMs: 1_000, retry: { maxAttempts: 1 } });
    const slow = routing.route(responseOf('s', 'hello', { channel: { kind: 'test', id: 'slow' } }));
    const fast = routing.route(responseOf('f', 'hello', { channel: { kind: 'test', id: 'fast' } }));
    const { outcome } = await drive(clock, slow);
    expect(outcome.error?.code).toBe('TROUPE_TRANSPORT_TIMEOUT');
    expect((await fast).sent).toBe(true);
  });
});

describe('order and sharing', () => {
  it('replies to one channel go out in the order they were routed, even when the first is slow', async () => {
    const transport = new ScriptedTransport(async (n) => {
      if (n === 1) await new Promise((r) => setImmediate(r));
      return { messageId: `m${n}` };
    });
    const { routing } = routingWith([transport]);
    const outcomes = await Promise.all(
      ['one', 'two', 'three'].map((text) => routing.route(responseOf(text, text))),
    );
    expect(transport.messages.map((m) => m.text)).toEqual(['one', 'two', 'three']);
    expect(outcomes.every((o) => o.sent)).toBe(true);
  });

  it('the same response routed twice at once is delivered once, and both callers get its outcome', async () => {
    const transport = new RecordingTransport();
    const { routing } = routingWith([transport]);
    const told: string[] = [];
    const a = routing.routePrepared(responseOf('same', 'hello'), (o) => told.push(`a:${o.sent}`));
    const b = routing.resume(
      { response: responseOf('same', 'hello'), recordedAt: 0, sentParts: [] } as never,
      (o) => told.push(`b:${o.sent}`),
    );
    expect(b).toBe(a);
    await a;
    await new Promise<void>((r) => setImmediate(r));
    expect(transport.attempts).toHaveLength(1);
    expect(told.sort()).toEqual(['a:true', 'b:true']);
  });

  it('after a crash, only the parts the transport had not taken are sent, marked as resumed', async () => {
    const outbox = new MemoryOutbox();
    const transport = new RecordingTransport({ limits: { maxTextLength: 20 } });
    const text = 'aaaa bbbb cccc dddd eeee ffff gggg';
    const { entry } = await outbox.record(responseOf('crash', text), 5);
    await outbox.markPartSent('crash', { index: 0, kind: 'text', messageId: 'old-0', attempts: 1 });
    const { routing } = routingWith([transport], { outbox });
    const resent: RoutingOutcome[] = [];
    const outcomes = await routing.recover((o) => resent.push(o));
    expect(outcomes).toHaveLength(1);
    expect(resent).toEqual(outcomes);
    expect(transport.sent.map((m) => m.idempotencyKey)).toEqual(['crash#1']);
    expect(transport.sent[0]?.resumedFrom).toBe(entry.recordedAt);
    expect(outcomes[0]?.parts.map((p) => p.messageId)).toEqual(['old-0', 'test-1']);
    expect((await outbox.get('crash'))?.settled?.sent).toBe(true);
  });

  it('recovery asks, per entry, whether it may resend', async () => {
    const outbox = new MemoryOutbox();
    await outbox.record(responseOf('mine', 'a'), 0);
    await outbox.record(responseOf('theirs', 'b', { channel: { kind: 'test', id: 'other' } }), 0);
    const transport = new RecordingTransport();
    const { routing } = routingWith([transport], { outbox });
    const outcomes = await routing.recover(undefined, async (e) => e.response.idempotencyKey === 'mine');
    expect(outcomes.map((o) => o.idempotencyKey)).toEqual(['mine']);
    expect(transport.texts()).toEqual(['a']);
    expect((await outbox.unsettled()).map((e) => e.response.idempotencyKey)).toEqual(['theirs']);
  });
});

describe('recovery serves only its own channels', () => {
  it('leaves the entries of channels no transport here serves, and asks about no lease for them', async () => {
    const outbox = new MemoryOutbox();
    await outbox.record(responseOf('here', 'a', { channel: { kind: 'test', id: 'mine' } }), 0);
    await outbox.record(responseOf('elsewhere', 'b', { channel: { kind: 'test', id: 'yours' } }), 1);
    await outbox.record(responseOf('no-kind', 'c', { channel: { kind: 'discord', id: '9' } }), 2);
    const transport = new RecordingTransport();
    const served = Object.assign(transport, { serves: (id: string) => id === 'mine' });
    const { routing } = routingWith([served], { outbox });
    const asked: string[] = [];
    const outcomes = await routing.recover(undefined, async (e) => {
      asked.push(e.response.idempotencyKey);
      return true;
    });
    expect(asked).toEqual(['here']);
    expect(outcomes.map((o) => o.idempotencyKey)).toEqual(['here']);
    expect(transport.texts()).toEqual(['a']);
    expect((await outbox.unsettled()).map((e) => e.response.idempotencyKey)).toEqual([
      'elsewhere',
      'no-kind',
    ]);
  });
});

describe('recovery with a damaged entry', () => {
  it('leaves an entry whose channel is not a channel, and resends the others', async () => {
    const outbox = new MemoryOutbox();
    await outbox.record(responseOf('good', 'a'), 0);
    const stored = await outbox.unsettled();
    const damaged = { ...stored[0], key: 'bad', response: { ...stored[0]?.response, channel: null } };
    outbox.unsettled = async () => [...stored, damaged as unknown as OutboxEntry];
    const transport = new RecordingTransport();
    const { routing } = routingWith([transport], { outbox });
    const outcomes = await routing.recover();
    expect(outcomes.map((o) => o.idempotencyKey)).toEqual(['good']);
    expect(transport.texts()).toEqual(['a']);
  });
});

describe('stopping for good', () => {
  it('a send in flight ends as aborted, its entry stays for the next start, and its caller is not told it settled', async () => {
    const transport = new ScriptedTransport(() => new Promise(() => undefined));
    const { routing, outbox, clock } = routingWith([transport]);
    const told: RoutingOutcome[] = [];
    const delivery = routing.routePrepared(responseOf('pending', 'hello'), (o) => told.push(o));
    await new Promise<void>((r) => setImmediate(r));
    expect(routing.sendsInFlight).toBe(1);
    routing.abandon();
    routing.abandon();
    const outcome = await delivery;
    expect(outcome).toMatchObject({
      sent: false,
      attempted: true,
      error: {
        code: 'TROUPE_TRANSPORT_ABORTED',
        message:
          'The runtime stopped before this reply was sent; it stays in the outbox and is sent on the next start.',
        retryable: true,
      },
    });
    expect(told).toEqual([]);
    expect(transport.signals[0]?.aborted).toBe(true);
    expect((await outbox.unsettled()).map((e) => e.response.idempotencyKey)).toEqual(['pending']);
    expect(clock.pending).toBe(0);
    // Nothing more goes out afterwards.
    const later = await routing.route(responseOf('later', 'hi'));
    expect(later.sent).toBe(false);
    expect(transport.messages).toHaveLength(1);
  });

  it('a record retry waiting for its backoff ends at once: nothing sent, and its caller is not told (the turn stays in flight)', async () => {
    const transport = new RecordingTransport();
    const outbox = new MemoryOutbox();
    outbox.record = async () => {
      throw new TroupeError('TROUPE_STORE_UNAVAILABLE', 'the store is away', { retryable: true });
    };
    const { routing, clock } = routingWith([transport], { outbox });
    const told: RoutingOutcome[] = [];
    const delivery = routing.routePrepared(responseOf('k', 'hello'), (o) => told.push(o));
    await new Promise<void>((r) => setImmediate(r));
    routing.abandon();
    const outcome = await delivery;
    expect(outcome.error?.code).toBe('TROUPE_OUTBOX_UNAVAILABLE');
    expect(told).toEqual([]);
    expect(transport.attempts).toEqual([]);
    expect(clock.pending).toBe(0);
  });

  it('a retry waiting for its backoff ends at once', async () => {
    const transport = new RecordingTransport().failNext({ times: 5 });
    const { routing } = routingWith([transport], { retry: { baseDelayMs: 60_000 } });
    const delivery = routing.route(responseOf('waiting', 'hello'));
    await new Promise<void>((r) => setImmediate(r));
    routing.abandon();
    const outcome = await delivery;
    expect(outcome.sent).toBe(false);
    expect(transport.attempts).toHaveLength(1);
  });
});
