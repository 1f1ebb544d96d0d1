import type { Client } from 'discord.js';
import { afterEach, describe, expect, it } from 'vitest';
import { DiscordTransport } from '../../../src/adapters/discord/index.js';
import type { SpeechSynthesizer } from '../../../src/ports/speech.js';
import { mockModel } from '../../../src/testing/index.js';
import {
  ada,
  type DiscordHarness,
  GENERAL,
  GUILD,
  otherBot,
  RANDOM,
  startDiscordHarness,
  THREAD,
  waitUntil,
} from '../../support/discordHarness.js';

let harness: DiscordHarness | undefined;
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

const until = (check: () => boolean | undefined, timeout = 4_000) => waitUntil(check, timeout);

const bob = { id: '300000000000000002', username: 'bob' };
const SUMMONERS = '400000000000000002';

describe('slash commands: who may summon, and how often', () => {
  it('with summon roles set, a person without one is told which roles it takes; with one, the summon goes through', async () => {
    harness = await startDiscordHarness({ bot: { summon: { roles: ['summoners'] } } });
    const { fake } = harness;
    const refused = fake.interact({
      channelId: RANDOM,
      user: bob,
      command: 'summon',
      options: { avatar: 'rex' },
    });
    expect((await refused.answered(2))[1]?.content).toBe(
      'Summoning here needs one of these roles: @summoners.',
    );
    const allowed = fake.interact({
      channelId: RANDOM,
      user: ada,
      command: 'summon',
      options: { avatar: 'rex' },
      roles: [SUMMONERS],
    });
    expect((await allowed.answered(2))[1]?.content).toContain('Rex is here');
    expect(fake.executions.map((e) => e.username)).toEqual(['Rex']);
  });

  it('past the daily limit a person is told the limit and when they can summon again; others are not affected', async () => {
    const now = Date.parse('2026-11-25T22:30:00Z');
    harness = await startDiscordHarness({ bot: { summon: { perDay: 2 }, now: () => now } });
    const { fake } = harness;
    for (const avatar of ['rex', 'nova']) {
      const ok = fake.interact({ channelId: RANDOM, user: ada, command: 'summon', options: { avatar } });
      expect((await ok.answered(2))[1]?.content).toMatch(/is here/u);
    }
    // Rex is here already in #random; bringing him into another channel would be a third summon.
    const third = fake.interact({
      channelId: THREAD,
      user: ada,
      command: 'summon',
      options: { avatar: 'rex' },
    });
    expect((await third.answered(2))[1]?.content).toBe(
      'You have used your 2 summons for today. You can summon again after midnight UTC (in 1h 30m).',
    );
    const other = fake.interact({
      channelId: RANDOM,
      user: bob,
      command: 'summon',
      options: { avatar: 'rex' },
    });
    expect((await other.answered(2))[1]?.content).toMatch(/Rex is here/u);
  });

  it('a /summon still waiting for its greeting is answered at once when the bot stops', async () => {
    const slow = mockModel(
      (request) =>
        new Promise((_, reject) =>
          request.signal?.addEventListener('abort', () => reject(new Error('aborted'))),
        ),
    );
    // Without the stop, the command would wait for the greeting far past this test's time.
    harness = await startDiscordHarness({ runtime: { model: slow }, bot: { greetingTimeoutMs: 600_000 } });
    const { fake, bot } = harness;
    const summon = fake.interact({
      channelId: RANDOM,
      user: ada,
      command: 'summon',
      options: { avatar: 'rex' },
    });
    await summon.answered(1); // deferred; the greeting is being written
    bot.stopListening();
    const answers = await summon.answered(2);
    expect(answers[1]?.content).toBe('🦖 Rex is here.');
  });

  it('an interaction delivered twice is answered once', async () => {
    harness = await startDiscordHarness();
    const { fake, bot } = harness;
    let received = 0;
    (harness.transport as unknown as { client: Client }).client.on('interactionCreate', () => {
      received += 1;
    });
    const first = fake.interact({ channelId: GENERAL, user: ada, command: 'avatars' });
    await first.answered(1);
    // The gateway delivers the same interaction again (a resume, another shard).
    const again = fake.requests.length;
    fake.dispatch(
      'INTERACTION_CREATE',
      {
        id: first.id,
        application_id: fake.applicationId,
        type: 2,
        data: { id: `${GUILD}1`, name: 'avatars', type: 1 },
        guild_id: GUILD,
        channel_id: GENERAL,
        member: {
          user: { id: ada.id, username: ada.username, discriminator: '0' },
          roles: [],
          permissions: '0',
        },
        token: 'another-token',
        version: 1,
        locale: 'en-US',
        entitlements: [],
        authorizing_integration_owners: {},
        context: 0,
      },
      GUILD,
    );
    await until(() => received === 2);
    await bot.whenCommandsIdle();
    expect(fake.requests.slice(again).filter((r) => r.path.startsWith('/interactions/'))).toEqual([]);
  });

  it('/avatars lists who is here with summon turns, conversation time and open threads; /dismiss sends one away', async () => {
    harness = await startDiscordHarness();
    const { fake } = harness;
    await fake
      .interact({ channelId: RANDOM, user: ada, command: 'summon', options: { avatar: 'rex' } })
      .answered(2);
    const [shown] = await fake.interact({ channelId: RANDOM, user: ada, command: 'avatars' }).answered(1);
    expect(shown?.ephemeral).toBe(true);
    expect(shown?.content).toMatch(
      /Here now:\n• \*\*🦖 Rex\*\* — 5 summon turns left — in conversation for 5m/u,
    );
    expect(shown?.content).toContain('Can be summoned: 🌟 Nova');
    const [gone] = await fake
      .interact({ channelId: RANDOM, user: ada, command: 'dismiss', options: { avatar: 'Rex' } })
      .answered(1);
    expect(gone?.content).toBe('🦖 Rex leaves this channel.');
    const [notHere] = await fake
      .interact({ channelId: RANDOM, user: ada, command: 'dismiss', options: { avatar: 'rex' } })
      .answered(1);
    expect(notHere?.content).toBe('🦖 Rex is not in this channel.');
  });
});

describe('Discord messages as people meet them', () => {
  it('notes attachments for the avatars, and answers a message that is only an attachment', async () => {
    const model = mockModel('Nice picture.');
    harness = await startDiscordHarness({ runtime: { model } });
    const { fake, runtime } = harness;
    fake.postMessage({
      channelId: GENERAL,
      author: ada,
      content: 'Nova',
      attachments: [{ filename: 'comet.png', size: 20_480, content_type: 'image/png' }],
    });
    await until(() => fake.executions.length >= 1);
    await runtime.whenIdle();
    expect(model.calls[0]?.turn.context.triggerText).toBe('Nova\n[attachment: comet.png, image/png, 20 KB]');
  });

  it('an edit that names an avatar the message did not name gets that avatar’s answer; other edits change nothing', async () => {
    harness = await startDiscordHarness({ runtime: { model: mockModel('Yes?') } });
    const { fake, runtime } = harness;
    const typo = fake.postMessage({ channelId: GENERAL, author: ada, content: 'Rax, are you there?' });
    await until(() => harness?.transport.memory.get(typo.id) !== undefined);
    await runtime.whenIdle();
    const before = fake.executions.length;
    const edit = (content: string) =>
      fake.dispatch(
        'MESSAGE_UPDATE',
        { ...typo, content, edited_timestamp: new Date().toISOString() },
        GUILD,
      );
    edit('Rax, are you there??');
    edit('Rex, are you there?');
    await until(() => fake.executions.length >= before + 1);
    await runtime.whenIdle();
    expect(fake.executions.slice(before).map((e) => e.username)).toEqual(['Rex']);
  });

  it('does not quote a message its author deleted before the answer went out', async () => {
    harness = await startDiscordHarness({ runtime: { model: mockModel('Answered.') } });
    const { fake, runtime, transport } = harness;
    const said = fake.postMessage({ channelId: GENERAL, author: ada, content: 'Nova my secret is 1234' });
    await until(() => fake.executions.length >= 1);
    await runtime.whenIdle();
    expect(fake.executions[0]?.content).toContain('my secret is 1234');
    fake.dispatch('MESSAGE_DELETE', { id: said.id, channel_id: GENERAL, guild_id: GUILD }, GUILD);
    await until(() => transport.memory.get(said.id) === undefined);
    const list = fake.messages.get(GENERAL) ?? [];
    list.splice(
      list.findIndex((m) => m.id === said.id),
      1,
    );
    // The same answer again (a resend) would now quote nothing of it.
    await transport.send({
      idempotencyKey: 'again#0',
      channelId: GENERAL,
      text: 'Answered.',
      replyTo: { messageId: said.id },
    });
    expect(fake.executions.at(-1)?.content).toBe(
      `> ↪ a message [↗](https://discord.com/channels/${GUILD}/${GENERAL}/${said.id})\nAnswered.`,
    );
  });

  it('hears another bot only when TROUPE_DISCORD_ALLOW_BOTS names it', async () => {
    harness = await startDiscordHarness({
      runtime: { model: mockModel('Congrats.') },
      bot: { allowBots: [otherBot.id] },
    });
    const { fake, runtime } = harness;
    fake.postMessage({ channelId: GENERAL, author: otherBot, content: 'Nova, the build passed' });
    await until(() => fake.executions.length >= 1);
    await runtime.whenIdle();
    expect(fake.executions[0]?.username).toBe('Nova');
  });

  it('answers a direct message as the bot itself, the avatar named in bold, with a nonce so a resend is not posted twice', async () => {
    const DM = '500000000000000001';
    harness = await startDiscordHarness({
      avatars: [{ id: 'nova', name: 'Nova', emoji: '🌟', residentIn: [`discord:${DM}`] }],
      runtime: { model: mockModel('Hello in private.') },
    });
    const { fake, runtime, transport } = harness;
    const keys: string[] = [];
    runtime.outcomes$.subscribe((o) => keys.push(`${o.idempotencyKey}#0`));
    fake.postMessage({ channelId: DM, author: ada, content: 'Nova, a private question' });
    await until(() => keys.length >= 1);
    await runtime.whenIdle();
    const posted = fake.requests.filter((r) => r.method === 'POST' && r.path === `/channels/${DM}/messages`);
    expect(posted).toHaveLength(1);
    const body = posted[0]?.body as {
      content: string;
      nonce: string;
      enforce_nonce: boolean;
      allowed_mentions: unknown;
    };
    expect(body.content).toBe('**🌟 Nova**: Hello in private.');
    expect(body).toMatchObject({ enforce_nonce: true, allowed_mentions: { parse: [], replied_user: false } });
    expect(body.nonce).toHaveLength(25);
    // Another process resending the same part (it remembers nothing) sends the same nonce, so
    // Discord gives back the first message instead of posting a second.
    const other = new DiscordTransport({ client: (transport as unknown as { client: Client }).client });
    const receipt = await other.send({
      idempotencyKey: keys[0] as string,
      channelId: DM,
      text: 'Hello in private.',
      speaker: { avatarId: 'nova', name: 'Nova', emoji: '🌟' },
    });
    const inDm = fake.messages.get(DM) ?? [];
    expect(inDm).toHaveLength(2);
    expect(receipt.messageId).toBe(inDm[1]?.id);
  });

  it('speaks a voice reply as an audio attachment through the webhook', async () => {
    const speech: SpeechSynthesizer = {
      id: 'test:speech',
      async synthesize() {
        return { audio: new Uint8Array([1, 2, 3, 4]), mediaType: 'audio/ogg', extension: 'ogg' };
      },
    } as unknown as SpeechSynthesizer;
    harness = await startDiscordHarness({
      avatars: [{ id: 'nova', name: 'Nova', voice: 'always', residentIn: [`discord:${GENERAL}`] }],
      runtime: { model: mockModel('Listen to this.'), speech },
    });
    const { fake, runtime } = harness;
    fake.postMessage({ channelId: GENERAL, author: ada, content: 'Nova, say something' });
    await until(() => fake.executions.length >= 1);
    await runtime.whenIdle();
    expect(fake.executions[0]?.files).toEqual([{ name: 'voice.ogg', contentType: 'audio/ogg', size: 4 }]);
  });
});
