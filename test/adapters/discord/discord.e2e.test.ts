import { afterEach, describe, expect, it } from 'vitest';
import { mockModel } from '../../../src/testing/index.js';
import {
  ada,
  type DiscordHarness,
  defaultGuild,
  GENERAL,
  GUILD,
  otherBot,
  startDiscordHarness,
  THREAD,
  waitUntil,
} from '../../support/discordHarness.js';
import { startFakeDiscord } from '../../support/fakeDiscord.js';

let harness: DiscordHarness | undefined;
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

const until = (check: () => boolean | undefined, timeout = 4_000) => waitUntil(check, timeout);

describe('Troupe on Discord (real discord.js against a fake Discord)', () => {
  it('registers the slash commands in the guild, and a summon greets through the channel webhook with the avatar’s name and picture', async () => {
    harness = await startDiscordHarness();
    const { fake } = harness;
    expect(fake.commands.get(`guild:${GUILD}`)?.map((c) => c.name)).toEqual([
      'summon',
      'dismiss',
      'forget',
      'avatars',
      'troupe',
    ]);

    const summon = fake.interact({
      channelId: GENERAL,
      user: ada,
      command: 'summon',
      options: { avatar: 'nova' },
    });
    const answers = await summon.answered(2);
    // Deferred first (ephemeral), then edited when the greeting is out.
    expect(answers[0]).toMatchObject({ kind: 'callback', type: 5, ephemeral: true });
    expect(answers[1]).toMatchObject({ kind: 'edit', ephemeral: true });
    expect(answers[1]?.content).toContain('Nova is here and said hello');

    const [greeting] = await fake.executed(1);
    expect(greeting).toMatchObject({ username: 'Nova', avatarUrl: 'https://example.com/nova.png' });
    expect(greeting?.message.channel_id).toBe(GENERAL);
    expect(greeting?.content).toBeTruthy();
    expect(fake.webhooks.size).toBe(1);
    expect(greeting?.allowedMentions).toEqual({ parse: [], users: [], roles: [] });
  });

  it('accepts the avatar as an id or a name in any case, and autocompletes over the avatars file', async () => {
    harness = await startDiscordHarness();
    const { fake } = harness;
    const complete = fake.interact({
      channelId: GENERAL,
      user: ada,
      command: 'summon',
      options: { avatar: 'r' },
      focused: 'avatar',
    });
    const [choices] = await complete.answered(1);
    expect(choices).toMatchObject({ type: 8, choices: [{ name: '🦖 Rex', value: 'rex' }] });

    const summon = fake.interact({
      channelId: GENERAL,
      user: ada,
      command: 'summon',
      options: { avatar: 'NOVA' },
    });
    expect((await summon.answered(2))[1]?.content).toContain('Nova is here');
    const unknown = fake.interact({
      channelId: GENERAL,
      user: ada,
      command: 'summon',
      options: { avatar: 'Zed' },
    });
    expect((await unknown.answered(2))[1]?.content).toMatch(
      /No avatar called “Zed”. Avatars: 🌟 Nova, 🦖 Rex/u,
    );
  });

  it('a person mentioning two avatars gets an answer from both, each under its own name, within the cascade limits', async () => {
    harness = await startDiscordHarness({
      runtime: { model: mockModel(({ avatar }) => `${avatar.id} here, answering.`) },
    });
    const { fake, runtime } = harness;
    const asked = fake.postMessage({
      channelId: GENERAL,
      author: ada,
      content: 'Nova and Rex, what do you think?',
    });
    await until(() => fake.executions.length >= 2);
    await runtime.whenIdle();
    const names = fake.executions.map((e) => e.username);
    expect(names.sort()).toEqual(['Nova', 'Rex']);
    // The answer to the person quotes them and links to their message.
    const first = fake.executions[0];
    expect(first?.content).toContain(`<@${ada.id}>`);
    expect(first?.content).toContain(`https://discord.com/channels/${GUILD}/${GENERAL}/${asked.id}`);
    // Their message was not a reply, so nobody is pinged.
    expect(first?.allowedMentions).toEqual({ parse: [], users: [], roles: [] });
    // A role named after an avatar is a mention of it.
    fake.postMessage({
      channelId: GENERAL,
      author: ada,
      content: '<@&400000000000000001> one more thing',
      mentionRoles: ['400000000000000001'],
    });
    await until(() => fake.executions.length >= 3);
    await runtime.whenIdle();
    expect(fake.executions.at(-1)?.username).toBe('Nova');
    // The avatars' own webhook messages came back through the gateway, and nobody answered them.
    expect(fake.executions.length).toBe(3);
  });

  it('a reply to an avatar’s webhook message reaches that avatar, and pings the person back only when their reply pinged', async () => {
    harness = await startDiscordHarness({
      runtime: { model: mockModel(({ avatar }) => `${avatar.id} speaking.`) },
    });
    const { fake, runtime } = harness;
    fake.postMessage({ channelId: GENERAL, author: ada, content: 'Rex, hello' });
    await until(() => fake.executions.length >= 1);
    await runtime.whenIdle();
    const rexMessage = fake.executions[0]?.message;
    expect(fake.executions[0]?.username).toBe('Rex');

    // A reply without a name in it: only the reply says who it is for.
    fake.postMessage({
      channelId: GENERAL,
      author: ada,
      content: 'tell me more',
      replyTo: rexMessage?.id,
      replyPing: false,
    });
    await until(() => fake.executions.length >= 2);
    await runtime.whenIdle();
    expect(fake.executions[1]?.username).toBe('Rex');
    expect(fake.executions[1]?.allowedMentions).toEqual({ parse: [], users: [], roles: [] });
  });

  it('after a restart, a reply to an avatar’s earlier message still reaches that avatar', async () => {
    const fake = await startFakeDiscord({ guilds: [defaultGuild] });
    try {
      const model = mockModel(({ avatar }) => `${avatar.id} speaking.`);
      const before = await startDiscordHarness({ fake, runtime: { model } });
      fake.postMessage({ channelId: GENERAL, author: ada, content: 'Rex, hello' });
      await until(() => fake.executions.length >= 1);
      await before.runtime.whenIdle();
      // Nova speaks last, so only the reply itself can say the next message is for Rex.
      fake.postMessage({ channelId: GENERAL, author: ada, content: 'Nova, hi' });
      await until(() => fake.executions.length >= 2);
      await before.runtime.whenIdle();
      await before.stop();
      const rexMessage = fake.executions[0]?.message;
      expect(fake.executions.map((e) => e.username)).toEqual(['Rex', 'Nova']);

      harness = await startDiscordHarness({ fake, runtime: { model } });
      fake.postMessage({ channelId: GENERAL, author: ada, content: 'and then?', replyTo: rexMessage?.id });
      await until(() => fake.executions.length >= 3);
      await harness.runtime.whenIdle();
      expect(fake.executions[2]?.username).toBe('Rex');
      await harness.stop();
    } finally {
      harness = undefined;
      await fake.close();
    }
  });

  it('pings the person back when their own message was a reply that pinged', async () => {
    harness = await startDiscordHarness({ runtime: { model: mockModel('Noted.') } });
    const { fake, runtime } = harness;
    const bob = { id: '300000000000000002', username: 'bob' };
    const bobSaid = fake.postMessage({
      channelId: GENERAL,
      author: bob,
      content: 'I like fossils',
      dispatch: false,
    });
    fake.postMessage({
      channelId: GENERAL,
      author: ada,
      content: 'Rex, bob says he likes fossils',
      replyTo: bobSaid.id,
    });
    await until(() => fake.executions.length >= 1);
    await runtime.whenIdle();
    expect(fake.executions[0]?.allowedMentions).toEqual({ parse: [], users: [ada.id], roles: [] });
  });

  it('never answers the bot’s own webhook messages, and ignores other bots', async () => {
    harness = await startDiscordHarness({ runtime: { model: mockModel('Hi.') } });
    const { fake, runtime } = harness;
    fake.postMessage({ channelId: GENERAL, author: otherBot, content: 'Nova, Rex: build passed' });
    fake.postMessage({ channelId: GENERAL, author: ada, content: 'Nova?' });
    await until(() => fake.executions.length >= 1);
    await runtime.whenIdle();
    // Only the person's message was answered, once; Nova's own message came back and was ignored.
    expect(fake.executions.map((e) => e.username)).toEqual(['Nova']);
    expect(fake.webhookMessages(GENERAL)).toHaveLength(1);
  });

  it('answers in a Discord thread through the parent channel’s webhook with thread_id', async () => {
    harness = await startDiscordHarness({ runtime: { model: mockModel('In the thread.') } });
    const { fake, runtime } = harness;
    fake.postMessage({ channelId: THREAD, author: ada, content: 'Nova, are you here?' });
    await until(() => fake.executions.length >= 1);
    await runtime.whenIdle();
    expect(fake.executions[0]).toMatchObject({ threadId: THREAD, username: 'Nova' });
    expect(fake.executions[0]?.message.channel_id).toBe(THREAD);
    expect([...fake.webhooks.values()].map((w) => w.channel_id)).toEqual([GENERAL]);
  });

  it('sends a 5,000-character answer as ordered parts under 2,000 characters', async () => {
    const sentences = Array.from(
      { length: 100 },
      (_, i) => `Sentence number ${i + 1} is about fossils and time.`,
    );
    const long = sentences.join(' ').padEnd(5_000, ' and more').slice(0, 5_000);
    harness = await startDiscordHarness({ runtime: { model: mockModel(long), maxReplyChars: 6_000 } });
    const { fake, runtime } = harness;
    fake.postMessage({ channelId: GENERAL, author: ada, content: 'Rex, tell me everything' });
    await until(() => fake.executions.length >= 3);
    await runtime.whenIdle();
    const parts = fake.executions.map((e) => e.content ?? '');
    expect(parts.length).toBeGreaterThanOrEqual(3);
    for (const part of parts) expect(part.length).toBeLessThanOrEqual(2000);
    // The quote line is on the first part only; the text reads in order.
    expect(parts[0]).toMatch(/^> ↪ /u);
    const text = [parts[0]?.split('\n').slice(1).join('\n'), ...parts.slice(1)].join(' ');
    expect(text.replace(/\s+/gu, ' ')).toBe(long.replace(/\s+/gu, ' ').trim());
    const ids = fake.executions.map((e) => BigInt(e.message.id));
    expect([...ids].sort((a, b) => (a < b ? -1 : 1))).toEqual(ids);
  });
});
