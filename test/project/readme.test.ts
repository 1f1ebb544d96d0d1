import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderConfigTables, withConfigTables } from '../../scripts/configTables.js';
import { renderReadmeTour, withTour } from '../../scripts/readmeTour.js';
import { defaultCoordinationConfig } from '../../src/config/coordinationConfig.js';
import { ChannelFloor } from '../../src/floor/channelFloor.js';

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

describe('README', () => {
  it('starts with the two commands: the main job and the tests', () => {
    const firstBlock = readme.split('```')[1] ?? '';
    expect(firstBlock).toContain('npm ci && npm start');
    expect(firstBlock).toContain('npm test');
  });

  it('shows the tour as `npm start` prints it now (run `npm run readme:tour` after a change)', async () => {
    expect(readme).toBe(withTour(readme, await renderReadmeTour()));
  });

  it('stands on its own: nothing in the repository points outside it', () => {
    const root = path.resolve(import.meta.dirname, '../..');
    const files = ['README.md', 'package.json'];
    const walk = (dir: string) => {
      for (const entry of readdirSync(path.join(root, dir), { withFileTypes: true })) {
        const rel = path.join(dir, entry.name);
        if (entry.isDirectory()) walk(rel);
        else if (/\.(ts|md|ya?ml|json)$/.test(entry.name)) files.push(rel);
      }
    };
    for (const dir of ['src', 'docs', 'test', 'scripts', 'examples']) walk(dir);
    const self = path.join('test', 'project', 'readme.test.ts');
    const outside = files.filter(
      (f) =>
        f !== self &&
        /DESIGN\.md|DESIGN invariant|\.\.\/shared/.test(readFileSync(path.join(root, f), 'utf8')),
    );
    expect(outside).toEqual([]);
  });

  it('the Discord invite link asks for exactly the permissions the bot needs', async () => {
    const { DISCORD_BOT_PERMISSIONS, discordInviteUrl } = await import('../../src/adapters/discord/index.js');
    expect(readme).toContain(`permissions=${DISCORD_BOT_PERMISSIONS}`);
    expect(readme).toContain(discordInviteUrl('APP_ID'));
  });

  it('shows the configuration tables as the settings define them (run `npm run readme:config` after a change)', () => {
    expect(readme).toBe(withConfigTables(readme, renderConfigTables()));
  });

  it('the embedding example does what it says', () => {
    const floor = new ChannelFloor({
      channelId: 'general',
      config: defaultCoordinationConfig,
      roster: [
        { id: 'luna', name: 'Luna', emoji: '🌙', topics: ['stars'] },
        { id: 'rex', name: 'Rex' },
      ],
      present: ['luna', 'rex'],
    });
    const effects = floor.handle({
      type: 'message',
      at: 1_000,
      messageId: 'm1',
      author: { kind: 'human', id: 'u1', name: 'Sam' },
      text: 'Luna, ask Rex about meteors',
    });
    const claims = effects.flatMap((e) => (e.type === 'turn.claimed' ? [e.turn] : []));
    expect(claims.map((c) => [c.avatarId, c.rung, c.reason])).toContainEqual([
      'luna',
      'mention',
      'Luna was mentioned by Sam',
    ]);
  });
});

describe('README: embedding the runtime', () => {
  it('the createRuntime example delivers Luna’s answer through the transport', async () => {
    const { createRuntime, silentLogger } = await import('troupe');
    const { modelFromEnv } = await import('../../src/adapters/llm/index.js');
    const { openDefaultStore } = await import('../../src/adapters/store/sqlite/index.js');
    const { speechFromEnv } = await import('../../src/adapters/voice/index.js');
    const posted: string[] = [];
    const postToMyChat = async (message: { text?: string }) => {
      posted.push(message.text ?? '');
      return `w${posted.length}`;
    };
    const runtime = createRuntime({
      store: await openDefaultStore({ TROUPE_STORE: 'memory' }),
      avatars: [
        {
          id: 'luna',
          name: 'Luna',
          emoji: '🌙',
          persona: 'A dreamy astronomer.',
          residentIn: ['webchat:general'],
        },
        { id: 'rex', name: 'Rex', persona: 'A retired T. rex who bakes.' },
      ],
      model: modelFromEnv({}).model,
      speech: speechFromEnv({}).speech,
      transports: [
        {
          kind: 'webchat',
          limits: { maxTextLength: 2000, voice: false, attachments: false },
          async send(message) {
            return { messageId: await postToMyChat(message) };
          },
        },
      ],
      logger: silentLogger(),
    });
    const outcomes: boolean[] = [];
    runtime.outcomes$.subscribe((o) => outcomes.push(o.sent));
    runtime.send({
      type: 'channel.message',
      channel: { kind: 'webchat', id: 'general' },
      messageId: 'm1',
      author: { kind: 'human', id: 'u1', name: 'Sam' },
      text: 'Luna, seen any comets?',
    });
    await runtime.stop();
    expect(outcomes).toEqual([true]);
    expect(posted).toHaveLength(1);
  });

  it('the troupe/testing example works as written', async () => {
    const { createTestRuntime } = await import('../../src/testing/index.js');
    const t = createTestRuntime({ avatars: [{ id: 'luna', name: 'Luna', residentIn: ['test:room'] }] });
    await t.say('Luna, seen any comets?');
    expect(t.transport.texts()).toHaveLength(1);
    await t.advance(5 * 60_000);
    await t.stop();
  });
});
