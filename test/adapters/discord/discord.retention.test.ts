/**
 * What the Discord adapter keeps per channel stays bounded on a long run (discord.js caches the
 * last two messages of a channel; the adapter remembers the latest of each channel), and what
 * reads it still works: edits of messages discord.js no longer holds, replies to an avatar's
 * message the adapter forgot, and a quiet channel's messages however busy another is.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ChannelRecentMap } from '../../../src/adapters/discord/channelRecentMap.js';
import { mockModel } from '../../../src/testing/index.js';
import {
  ada,
  type DiscordHarness,
  GENERAL,
  GUILD,
  RANDOM,
  startDiscordHarness,
  waitUntil,
} from '../../support/discordHarness.js';

let harness: DiscordHarness | undefined;
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

const until = (check: () => boolean | undefined) => waitUntil(check, 10_000);

const saying = mockModel('Yes?');

describe('ChannelRecentMap', () => {
  it('keeps the newest entries of each channel, and no more than its cap in all', () => {
    const map = new ChannelRecentMap<number>(3, 5);
    map.set('quiet', 'q1', 1);
    for (let i = 1; i <= 100; i += 1) map.set('busy', `b${i}`, i);
    expect(map.get('q1')).toBe(1);
    expect(['b98', 'b99', 'b100'].map((k) => map.get(k))).toEqual([98, 99, 100]);
    expect(map.has('b97')).toBe(false);
    expect(map.size).toBe(4);
    for (let c = 1; c <= 10; c += 1) map.set(`c${c}`, `k${c}`, c);
    expect(map.size).toBe(5);
    expect(map.channelCount).toBe(5);
    expect(map.has('q1')).toBe(false);
    expect(map.delete('k10')).toBe(true);
    expect(map.channelCount).toBe(4);
  });
});

describe('what the Discord adapter keeps per channel', () => {
  it('remembers the latest messages of each channel: a busy channel does not push out a quiet one', async () => {
    harness = await startDiscordHarness({ runtime: { model: saying } });
    const { fake, transport } = harness;
    const quiet = fake.postMessage({ channelId: GENERAL, author: ada, content: 'a quiet remark' });
    const busy = Array.from({ length: 60 }, (_, i) =>
      fake.postMessage({ channelId: RANDOM, author: ada, content: `chatter ${i}` }),
    );
    await until(() => transport.memory.get(busy.at(-1)?.id ?? '') !== undefined);
    expect(transport.memory.get(quiet.id)?.text).toBe('a quiet remark');
    // The latest 20 (the default per channel).
    const kept = busy.filter((m) => transport.memory.get(m.id) !== undefined);
    expect(kept.map((m) => m.content)).toEqual(busy.slice(-20).map((m) => m.content));
  });

  it('answers an edit that names an avatar, of a message discord.js no longer holds', async () => {
    harness = await startDiscordHarness({ runtime: { model: saying } });
    const { fake, runtime, transport } = harness;
    const typo = fake.postMessage({ channelId: GENERAL, author: ada, content: 'Rax, are you there?' });
    const later = Array.from({ length: 12 }, (_, i) =>
      fake.postMessage({ channelId: GENERAL, author: ada, content: `and another thing ${i}` }),
    );
    await until(() => transport.memory.get(later.at(-1)?.id ?? '') !== undefined);
    await runtime.whenIdle();
    const edit = (message: typeof typo, content: string) =>
      fake.dispatch(
        'MESSAGE_UPDATE',
        { ...message, content, edited_timestamp: new Date().toISOString() },
        GUILD,
      );
    const quoting = (id: string) => fake.executions.filter((e) => e.content?.includes(id));
    // A resident may have answered the messages as first written.
    const answered = quoting(typo.id).length;
    const answeredLater = quoting(later[0]?.id ?? '').length;
    edit(typo, 'Rex, are you there?');
    // The same text again (a link preview added): nothing to answer.
    if (later[0]) edit(later[0], later[0].content);
    await until(() => quoting(typo.id).length >= answered + 1);
    await runtime.whenIdle();
    expect(
      quoting(typo.id)
        .slice(answered)
        .map((e) => e.username),
    ).toEqual(['Rex']);
    expect(quoting(later[0]?.id ?? '')).toHaveLength(answeredLater);
    expect(quoting(typo.id)[answered]?.content).toContain('Rex, are you there?');
  });

  it("a reply to an avatar's message the adapter forgot still reaches that avatar", async () => {
    harness = await startDiscordHarness({ runtime: { model: saying } });
    const { fake, runtime, transport } = harness;
    fake.postMessage({ channelId: GENERAL, author: ada, content: 'Rex, how old are fossils?' });
    await until(() => fake.executions.length >= 1);
    await runtime.whenIdle();
    const rexSaid = fake.executions[0]?.message;
    if (!rexSaid) throw new Error('Rex did not answer');
    // Newer messages push it out of discord.js's cache; the adapter forgets it too.
    for (let i = 0; i < 3; i += 1) fake.postMessage({ channelId: GENERAL, author: ada, content: `hmm ${i}` });
    await runtime.whenIdle();
    transport.memory.clear();
    const before = fake.executions.length;
    fake.postMessage({ channelId: GENERAL, author: ada, content: 'really?', replyTo: rexSaid.id });
    await until(() => fake.executions.slice(before).some((e) => e.content?.includes('really?')));
    await runtime.whenIdle();
    const answers = fake.executions.slice(before).filter((e) => e.content?.includes('really?'));
    expect(answers.map((e) => e.username)).toEqual(['Rex']);
  });
});
