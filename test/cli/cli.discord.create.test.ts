/**
 * `troupe discord` (real discord.js against the fake Discord, a local OpenAI-compatible server):
 * `/summon` with a name nobody has creates the avatar when TROUPE_SUMMON_CREATES is on (it is off
 * on Discord by default), gated by the summon roles, with the creation limit per person; the new
 * avatar speaks through the webhook under its name, `/avatars` lists it, and `/forget` (Manage
 * Server) removes it.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { discordInProcess } from '../support/cliInProcess.js';
import { ada, defaultGuild, GENERAL, GUILD } from '../support/discordHarness.js';
import { type FakeDiscord, startFakeDiscord } from '../support/fakeDiscord.js';
import {
  type ChatRequestBody,
  type FakeOpenAiServer,
  startFakeOpenAiServer,
} from '../support/fakeOpenAiServer.js';

const closing: (FakeDiscord | FakeOpenAiServer)[] = [];
afterEach(async () => {
  for (const fake of closing.splice(0)) await fake.close();
});

const until = (check: () => boolean | undefined, timeout = 60_000) =>
  vi.waitFor(
    () => {
      if (!check()) throw new Error('not yet');
    },
    { timeout, interval: 10 },
  );

const MANAGE_SERVER = String(1 << 5);
const SUMMONERS = '400000000000000002';
const bob = { id: '300000000000000002', username: 'bob', global_name: 'Bob' };
/** Someone uses `/command avatar:<avatar>` in #general (Ada, no roles, no permissions, unless `as` says). */
function ask(
  fake: FakeDiscord,
  command: string,
  avatar: string,
  as: { user?: typeof ada; roles?: string[]; permissions?: string } = {},
) {
  return fake.interact({ channelId: GENERAL, user: ada, command, options: { avatar }, ...as });
}

const isSketch = (body: ChatRequestBody) => body.response_format?.json_schema?.name === 'avatar_sketch';

async function start(env: Record<string, string> = {}) {
  const fake = await startFakeDiscord({ guilds: [defaultGuild] });
  const model = await startFakeOpenAiServer();
  closing.push(fake, model);
  model.respondWith((body) =>
    isSketch(body)
      ? {
          json: {
            name: 'Gandalf',
            emoji: '🧙',
            persona: 'A grey wizard fond of fireworks.',
            topics: ['fireworks'],
          },
        }
      : { text: 'A wizard is never late.' },
  );
  const run = discordInProcess(['--guild', GUILD], {
    DISCORD_TOKEN: fake.token,
    DISCORD_API_URL: fake.restApi,
    TROUPE_MODEL_BASE_URL: model.baseUrl,
    TROUPE_MODEL: 'fake',
    TROUPE_MODEL_RETRIES: '0',
    ...env,
  });
  await until(() => run.out().includes('Troupe is on Discord'));
  return { fake, model, run };
}

describe('troupe discord: /summon creates an avatar nobody has', () => {
  it('off by default: an unknown name is refused and nothing is asked of the model', async () => {
    const { fake, model, run } = await start();
    const summon = ask(fake, 'summon', 'Gandalf');
    expect((await summon.answered(2))[1]?.content).toMatch(/^No avatar called “Gandalf”\. Avatars: /u);
    expect(model.chatRequests().filter(isSketch)).toEqual([]);
    run.stop('SIGINT');
    expect(await run.code).toBe(0);
  });

  it('on: created, greets through the webhook as itself, listed by /avatars, and /forget removes it (admins only)', async () => {
    const { fake, model, run } = await start({ TROUPE_SUMMON_CREATES: 'true' });
    const summon = ask(fake, 'summon', 'gandalf');
    const answer = (await summon.answered(2))[1]?.content ?? '';
    expect(answer).toBe(
      '✨ Created 🧙 Gandalf: A grey wizard fond of fireworks.\n🧙 Gandalf is here and said hello.',
    );
    expect(model.chatRequests().filter(isSketch)).toHaveLength(1);
    await until(() => fake.executions.some((e) => e.username === 'Gandalf'));
    expect(fake.executions.find((e) => e.username === 'Gandalf')?.content).toBe('A wizard is never late.');
    // The new name is heard in messages like any avatar's.
    model.respondWith((body) => ({
      text: JSON.stringify(body.messages).includes('fireworks') ? 'Gandalf answers.' : 'someone else',
    }));
    fake.postMessage({ channelId: GENERAL, author: ada, content: 'Gandalf, are the fireworks ready?' });
    await until(() =>
      fake.executions.some((e) => e.username === 'Gandalf' && e.content === 'Gandalf answers.'),
    );

    const list = fake.interact({ channelId: GENERAL, user: ada, command: 'avatars' });
    const shown = (await list.answered(1))[0]?.content ?? '';
    expect(shown).toContain('**🧙 Gandalf**');
    expect(shown).toContain('Created by summoning (/forget removes them): 🧙 Gandalf (by Ada)');
    const suggest = fake.interact({
      channelId: GENERAL,
      user: ada,
      command: 'forget',
      options: { avatar: '' },
      focused: 'avatar',
    });
    expect((await suggest.answered(1))[0]?.choices?.map((c: { name: string }) => c.name)).toEqual([
      '🧙 Gandalf',
    ]);

    const member = ask(fake, 'forget', 'Gandalf');
    expect((await member.answered(1))[0]?.content).toBe('/forget is for server admins (Manage Server).');
    const nova = ask(fake, 'forget', 'nova', { permissions: MANAGE_SERVER });
    expect((await nova.answered(1))[0]?.content).toMatch(/^Nova comes from the avatars file/u);
    const admin = ask(fake, 'forget', 'Gandalf', { permissions: MANAGE_SERVER });
    expect((await admin.answered(1))[0]?.content).toBe(
      '🧙 Gandalf is forgotten: gone from every channel and the store.',
    );
    const after = fake.interact({ channelId: GENERAL, user: ada, command: 'avatars' });
    expect((await after.answered(1))[0]?.content).not.toContain('Gandalf');
    run.stop('SIGINT');
    expect(await run.code).toBe(0);
  });

  it('gated like summoning: the summon roles, then the creation limit per person', async () => {
    const { fake, run } = await start({
      TROUPE_SUMMON_CREATES: 'true',
      TROUPE_DISCORD_SUMMON_ROLES: 'Summoners',
      TROUPE_CREATES_PER_DAY: '1',
    });
    const outsider = ask(fake, 'summon', 'Saruman', { user: bob });
    expect((await outsider.answered(2))[1]?.content).toMatch(/^No avatar called “Saruman”/u);
    const first = ask(fake, 'summon', 'Gandalf', { roles: [SUMMONERS] });
    expect((await first.answered(2))[1]?.content).toMatch(/^✨ Created 🧙 Gandalf/u);
    const second = ask(fake, 'summon', 'Radagast', { roles: [SUMMONERS] });
    expect((await second.answered(2))[1]?.content).toMatch(
      /^You have created 1 avatar today, as many as you may\. You can create again after midnight UTC/u,
    );
    run.stop('SIGINT');
    expect(await run.code).toBe(0);
  });
});
