import { describe, expect, it } from 'vitest';
import { type TerminalMessage, TerminalTransport } from '../../../src/adapters/terminal/terminalTransport.js';
import { TransportError } from '../../../src/ports/transport.js';
import { createTestRuntime } from '../../../src/testing/index.js';

const nova = { avatarId: 'nova', name: 'Nova', emoji: '🔭' };

describe('TerminalTransport', () => {
  it('is a text-only transport of kind terminal', () => {
    const t = new TerminalTransport();
    expect(t.kind).toBe('terminal');
    expect(t.limits).toEqual({ maxTextLength: 2000, voice: false, attachments: false });
  });

  it('numbers human and avatar messages in one sequence and tells listeners', async () => {
    const seen: [TerminalMessage, number][] = [];
    const t = new TerminalTransport({ onMessage: (m, n) => seen.push([m, n]) });
    const human = t.recordInbound({
      channelId: 'lobby',
      author: { kind: 'human', id: 'u1', name: 'Ada' },
      text: 'hi Nova',
    });
    const receipt = await t.send({
      idempotencyKey: 'r1#0',
      channelId: 'lobby',
      text: 'Hello, Ada!',
      speaker: nova,
      replyTo: { messageId: human.messageId },
    });
    expect(human).toMatchObject({ number: 1, messageId: '1', source: 'inbound' });
    expect(receipt).toEqual({ messageId: '2' });
    expect(seen.map(([m, n]) => [n, m.author.name, m.text])).toEqual([
      [1, 'Ada', 'hi Nova'],
      [2, 'Nova', 'Hello, Ada!'],
    ]);
    expect(t.lookup(2)).toMatchObject({
      author: { kind: 'avatar', id: 'nova', name: 'Nova', emoji: '🔭' },
      replyTo: { messageId: '1' },
      source: 'sent',
      idempotencyKey: 'r1#0',
    });
    expect(t.lookup('#1')?.text).toBe('hi Nova');
    expect(t.lookup('x')).toBeUndefined();
    expect(t.nextNumber).toBe(3);
  });

  it('deduplicates on the idempotency key: same number, no second announcement', async () => {
    const seen: number[] = [];
    const t = new TerminalTransport();
    const stop = t.onMessage((_, n) => seen.push(n));
    const first = await t.send({ idempotencyKey: 'k', channelId: 'lobby', text: 'once', speaker: nova });
    const again = await t.send({ idempotencyKey: 'k', channelId: 'lobby', text: 'once', speaker: nova });
    expect(again).toEqual({ messageId: first.messageId, duplicate: true });
    expect(seen).toEqual([1]);
    stop();
    await t.send({ idempotencyKey: 'k2', channelId: 'lobby', text: 'twice', speaker: nova });
    expect(seen).toEqual([1]);
    expect(t.recent()).toHaveLength(2);
  });

  it('keeps only the last N messages for reply lookup, but numbering goes on', async () => {
    const t = new TerminalTransport({ keep: 2 });
    for (const text of ['a', 'b', 'c']) {
      t.recordInbound({ channelId: 'lobby', author: { kind: 'human', id: 'u1', name: 'Ada' }, text });
    }
    expect(t.lookup(1)).toBeUndefined();
    expect(t.recent().map((m) => [m.number, m.text])).toEqual([
      [2, 'b'],
      [3, 'c'],
    ]);
  });

  it('refuses a message without text, for good', async () => {
    const t = new TerminalTransport();
    const error = await t
      .send({ idempotencyKey: 'k', channelId: 'lobby', speaker: nova })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransportError);
    expect(error).toMatchObject({ code: 'TROUPE_TRANSPORT_UNSUPPORTED', retryable: false });
  });

  it('carries a runtime conversation: routing outcomes name the numbers it gave', async () => {
    const transport = new TerminalTransport();
    const t = createTestRuntime({ transports: [transport], channel: { kind: 'terminal', id: 'lobby' } });
    await t.summon('nova');
    const human = transport.recordInbound({
      channelId: 'lobby',
      author: { kind: 'human', id: 'u1', name: 'Ada' },
      text: 'Nova, what is that comet?',
    });
    await t.say(human.text, { messageId: human.messageId });
    const ids = t.outcomes.flatMap((o) => o.parts.map((p) => p.messageId));
    expect(ids.length).toBeGreaterThanOrEqual(2);
    expect(ids).toContain('1'); // the greeting came first
    expect(ids.every((id) => transport.lookup(id)?.author.kind === 'avatar')).toBe(true);
    const answer = transport.recent().find((m) => m.replyTo?.messageId === human.messageId);
    expect(answer?.author.name).toBe('Nova');
    await t.stop();
  });
});
