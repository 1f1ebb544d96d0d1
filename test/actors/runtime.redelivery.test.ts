/**
 * A channel remembers the ids of its latest inbound messages to drop a gateway's redeliveries, and
 * only those: a long conversation does not grow it.
 */
import { describe, expect, it } from 'vitest';
import { createTestRuntime } from '../../src/testing/index.js';

const avatars = [{ id: 'nova', name: 'Nova', residentIn: ['test:room'] }];

describe('redelivered messages in a long conversation', () => {
  it('drops a redelivery of a recent message, and remembers only the latest 128 ids', async () => {
    const t = createTestRuntime({ avatars, config: { summonProactiveEnabled: false } });
    for (let i = 1; i <= 400; i += 1) await t.say(`Nova, question ${i}?`, { messageId: `q${i}` });
    const answersTo = (id: string) => t.transport.sent.filter((m) => m.replyTo?.messageId === id).length;
    expect(answersTo('q400')).toBe(1);

    // Redelivered within the window: recognised, not answered again.
    await t.say('Nova, question 300?', { messageId: 'q300' });
    await t.say('Nova, question 400?', { messageId: 'q400' });
    expect(answersTo('q300')).toBe(1);
    expect(answersTo('q400')).toBe(1);

    // Far older than the window: forgotten, so the channel's memory stays flat.
    await t.say('Nova, question 1?', { messageId: 'q1' });
    expect(answersTo('q1')).toBe(2);
    await t.stop();
  });
});
