/**
 * What routing refuses before anything reaches a transport, and the outcome each refusal gives:
 * a caller (or an observer of `outcomes$`) learns why, with a stable code, and nothing is sent.
 */
import { describe, expect, it } from 'vitest';
import type { OutgoingResponse } from '../../src/ports/outgoingResponse.js';
import type { RoutingOutcome } from '../../src/ports/routingOutcome.js';
import { RecordingTransport } from '../../src/testing/recordingTransport.js';
import { responseOf, routingWith } from '../support/routingHarness.js';

describe('a response that is not an OutgoingResponse', () => {
  it('null or undefined is answered with an outcome, never a throw', async () => {
    const transport = new RecordingTransport();
    const { routing } = routingWith([transport]);
    const published: RoutingOutcome[] = [];
    routing.outcomes$.subscribe((o) => published.push(o));
    for (const nothing of [null, undefined]) {
      const outcome = await routing.route(nothing as unknown as OutgoingResponse);
      expect(outcome).toEqual({
        idempotencyKey: '',
        channel: { kind: '', id: '' },
        origin: { kind: 'notice' },
        attempted: false,
        sent: false,
        parts: [],
        voiceFellBackToText: false,
        duplicate: false,
        error: { code: 'TROUPE_RESPONSE_INVALID', message: expect.any(String), retryable: false },
        at: 0,
      });
    }
    expect(published).toHaveLength(2);
    expect(transport.attempts).toEqual([]);
  });

  it('names a nested bad field by its full path', async () => {
    const { routing } = routingWith([new RecordingTransport()]);
    const outcome = await routing.route({
      ...responseOf('k', 'hi'),
      channel: { kind: 'test', id: 7 },
    } as unknown as OutgoingResponse);
    expect(outcome.error?.message).toMatch(/^The response is not a valid OutgoingResponse: channel\.id: /u);
    // The outcome still says which reply and channel it was about.
    expect(outcome.idempotencyKey).toBe('k');
  });

  it('an outbox entry whose response is corrupt is refused when resumed, not sent', async () => {
    const transport = new RecordingTransport();
    const { routing } = routingWith([transport]);
    const corrupt = { ...responseOf('old', 'hi'), channel: undefined } as unknown as OutgoingResponse;
    const outcome = await routing.resume({ key: 'old', response: corrupt, recordedAt: 0, sentParts: [] });
    expect(outcome.error?.code).toBe('TROUPE_RESPONSE_INVALID');
    expect(transport.attempts).toEqual([]);
  });
});

describe('a channel kind with no transport', () => {
  it('is refused with a message saying how to fix it; once a transport is registered, the same reply goes out', async () => {
    const { routing, outbox } = routingWith([new RecordingTransport()]);
    const reply = responseOf('to-chat', 'hello', { channel: { kind: 'chat', id: 'general' } });
    const refused = await routing.route(reply);
    expect(refused).toEqual({
      idempotencyKey: 'to-chat',
      channel: { kind: 'chat', id: 'general' },
      origin: { kind: 'notice' },
      attempted: false,
      sent: false,
      parts: [],
      voiceFellBackToText: false,
      duplicate: false,
      error: {
        code: 'TROUPE_TRANSPORT_MISSING',
        message:
          'No transport is registered for channel kind "chat"; pass one to createRuntime({ transports }).',
        retryable: false,
      },
      at: 0,
    });
    // Refused before the outbox: nothing is left there to resend.
    expect(await outbox.get('to-chat')).toBeUndefined();

    const chat = new RecordingTransport({ kind: 'chat' });
    routing.register(chat);
    expect(routing.transportFor('chat')).toBe(chat);
    const sent = await routing.route(reply);
    expect(sent).toMatchObject({ sent: true, attempted: true, duplicate: false });
    expect(chat.texts()).toEqual(['hello']);
  });

  it('a transport registered again for a kind replaces the first', async () => {
    const first = new RecordingTransport();
    const { routing } = routingWith([first]);
    const second = new RecordingTransport();
    routing.register(second);
    await routing.route(responseOf('k', 'hi'));
    expect(first.attempts).toEqual([]);
    expect(second.texts()).toEqual(['hi']);
  });

  it('a transport with unusable limits is refused for good: trying again will not help', () => {
    const { routing } = routingWith([]);
    expect(() => routing.register(new RecordingTransport({ limits: { maxTextLength: 5 } }))).toThrowError(
      expect.objectContaining({ code: 'TROUPE_TRANSPORT_LIMIT_INVALID', retryable: false }),
    );
    expect(routing.transportFor('test')).toBeUndefined();
  });
});

describe('a response with nothing a transport could send', () => {
  it('is refused with a full outcome, and an empty refusal is published too', async () => {
    const transport = new RecordingTransport();
    const { routing } = routingWith([transport]);
    const published: RoutingOutcome[] = [];
    routing.outcomes$.subscribe((o) => published.push(o));
    const outcome = await routing.route(responseOf('blank', ''));
    expect(outcome).toEqual({
      idempotencyKey: 'blank',
      channel: { kind: 'test', id: 'room' },
      origin: { kind: 'notice' },
      attempted: false,
      sent: false,
      parts: [],
      voiceFellBackToText: false,
      duplicate: false,
      error: {
        code: 'TROUPE_RESPONSE_EMPTY',
        message: 'The response has no text, voice or attachment to send.',
        retryable: false,
      },
      at: 0,
    });
    expect(published).toEqual([outcome]);
  });

  it('only attachments, to a transport that takes none: the person is told which file could not be shown', async () => {
    const transport = new RecordingTransport({ limits: { attachments: false } });
    const { routing } = routingWith([transport]);
    const file = { name: 'a.txt', mediaType: 'text/plain', dataBase64: 'aGk=' };
    const outcome = await routing.route(responseOf('files', undefined, { attachments: [file] }));
    expect(outcome.sent).toBe(true);
    expect(outcome.parts.map((p) => p.kind)).toEqual(['text']);
    expect(transport.sent.map((m) => [m.text, m.attachments])).toEqual([
      ['[file not shown here: a.txt (text/plain)]', undefined],
    ]);
  });
});
