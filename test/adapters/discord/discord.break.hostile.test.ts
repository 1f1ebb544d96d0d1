import { describe, expect, it } from 'vitest';
import type { RoutingOutcome } from '../../../src/ports/routingOutcome.js';
import { mockModel } from '../../../src/testing/index.js';
import {
  ada,
  type DiscordHarness,
  defaultGuild,
  GENERAL,
  GUILD,
  otherBot,
  startDiscordHarness,
  stopAfterEach,
  waitUntil,
} from '../../support/discordHarness.js';
import { startFakeDiscord } from '../../support/fakeDiscord.js';

const { running, closers } = stopAfterEach();

const until = (check: () => boolean | undefined, timeout = 5_000) => waitUntil(check, timeout);

/** Answers with the words it was given, as a model repeating what a person asked it to say. */
const echo = mockModel(({ turn }) => turn.context.triggerText ?? 'hello');

/** Always says the same (naming nobody), so avatars do not answer each other. */
const fixed = mockModel('Noted.');

const NOTHING = { parse: [], users: [], roles: [] };

async function harness(options: Parameters<typeof startDiscordHarness>[0] = {}): Promise<DiscordHarness> {
  const h = await startDiscordHarness({ runtime: { model: echo }, ...options });
  running.push(h);
  return h;
}

describe('Discord hostile input (break attempts)', () => {
  it('a person making an avatar repeat @everyone, @here and role and user mentions pings nobody', async () => {
    const h = await harness();
    const { fake } = h;
    fake.postMessage({
      channelId: GENERAL,
      author: ada,
      content: 'Nova say @everyone @here <@&400000000000000002> <@300000000000000002> hi',
      mentionRoles: ['400000000000000002'],
    });
    await until(() => fake.executions.length >= 1);
    await h.runtime.whenIdle();
    for (const e of fake.executions) expect(e.allowedMentions).toEqual(NOTHING);
  });

  it('a role mention of a role named like an avatar in another case or NFKC form addresses that avatar', async () => {
    const fake = await startFakeDiscord({
      guilds: [
        {
          ...defaultGuild,
          roles: [
            { id: '400000000000000011', name: 'NOVA' },
            { id: '400000000000000012', name: 'ＲＥＸ' },
          ],
        },
      ],
    });
    closers.push(() => fake.close());
    const h = await harness({ fake, runtime: { model: fixed } });
    fake.postMessage({
      channelId: GENERAL,
      author: ada,
      content: 'hey <@&400000000000000011> and <@&400000000000000012>',
      mentionRoles: ['400000000000000011', '400000000000000012'],
    });
    await until(() => fake.executions.length >= 2);
    await h.runtime.whenIdle();
    expect(fake.executions.map((e) => e.username).sort()).toEqual(['Nova', 'Rex']);
  });

  it('a message of 4,000 characters is answered in parts under 2,000 characters each', async () => {
    const h = await harness({ runtime: { model: echo, maxReplyChars: 6_000 } });
    const { fake } = h;
    const long = `Nova ${'word '.repeat(799)}`.slice(0, 4000);
    fake.postMessage({ channelId: GENERAL, author: ada, content: long });
    await until(() => fake.executions.length >= 2);
    await h.runtime.whenIdle();
    for (const e of fake.executions) expect(e.content?.length ?? 0).toBeLessThanOrEqual(2000);
  });

  it('right-to-left and zero-width characters in the message do not spill into the quote line around the link', async () => {
    const h = await harness();
    const { fake } = h;
    fake.postMessage({ channelId: GENERAL, author: ada, content: 'Nova \u202eevil\u2066 text\u200b\u200f' });
    await until(() => fake.executions.length >= 1);
    await h.runtime.whenIdle();
    const quote = (fake.executions[0]?.content ?? '').split('\n')[0] ?? '';
    // A bidi override in the quoted snippet would reverse the link and what follows on screen.
    expect(quote).not.toMatch(/[\u202a-\u202e\u2066-\u2069\u200e\u200f]/u);
  });

  it('a reply to a message that was deleted is answered, quoting nothing of it', async () => {
    const h = await harness();
    const { fake } = h;
    const gone = fake.postMessage({ channelId: GENERAL, author: ada, content: 'secret', dispatch: false });
    const list = fake.messages.get(GENERAL) ?? [];
    list.splice(list.indexOf(gone), 1);
    fake.postMessage({ channelId: GENERAL, author: ada, content: 'Nova, about that', replyTo: gone.id });
    await until(() => fake.executions.length >= 1);
    await h.runtime.whenIdle();
    expect(fake.executions[0]?.content).not.toContain('secret');
    expect(fake.executions[0]?.allowedMentions).toEqual(NOTHING);
  });

  it('a reply to another integration’s webhook message is answered once, quoting the person', async () => {
    const h = await harness();
    const { fake } = h;
    // Another integration's webhook posts in the channel.
    const foreign = fake.postMessage({
      channelId: GENERAL,
      author: { ...otherBot, id: '700000000000000001', username: 'Weather' },
      content: 'Rain at 5',
    });
    foreign.webhook_id = '700000000000000001';
    fake.postMessage({
      channelId: GENERAL,
      author: ada,
      content: 'Nova, is that right?',
      replyTo: foreign.id,
    });
    await until(() => fake.executions.length >= 1);
    await h.runtime.whenIdle();
    expect(fake.executions).toHaveLength(1);
    expect(fake.executions[0]?.content?.split('\n')[0]).toMatch(
      /^> ↪ <@300000000000000001>: Nova, is that right\?/u,
    );
  });

  it('an edit of an avatar’s own message (Discord adds a link preview) is not answered', async () => {
    const h = await harness({ runtime: { model: fixed } });
    const { fake } = h;
    fake.postMessage({ channelId: GENERAL, author: ada, content: 'Nova, see https://example.com' });
    await until(() => fake.executions.length >= 1);
    await h.runtime.whenIdle();
    const posted = fake.executions[0]?.message;
    fake.dispatch(
      'MESSAGE_UPDATE',
      { ...posted, content: `${posted?.content} edited`, edited_timestamp: new Date().toISOString() },
      GUILD,
    );
    await new Promise((r) => setTimeout(r, 200));
    await h.runtime.whenIdle();
    expect(fake.executions).toHaveLength(1);
  });

  it('a message with only an attachment and an avatar-less channel is ignored without error', async () => {
    const h = await harness();
    const { fake, runtime } = h;
    const outcomes: RoutingOutcome[] = [];
    runtime.outcomes$.subscribe((o) => outcomes.push(o));
    fake.postMessage({
      channelId: GENERAL,
      author: ada,
      content: '',
      attachments: [{ filename: 'a.png', size: 10 }],
    });
    fake.postMessage({ channelId: GENERAL, author: ada, content: 'Nova?' });
    await until(() => fake.executions.length >= 1);
    await runtime.whenIdle();
    expect(outcomes.every((o) => o.sent)).toBe(true);
  });
});
