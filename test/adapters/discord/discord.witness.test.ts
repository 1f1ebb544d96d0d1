/**
 * On Discord too, an avatar's prompt holds only what it witnessed: `troupe discord` against the
 * fake Discord, with a local OpenAI-compatible server that records every prompt.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { type CliIo, runCli } from '../../../src/cli/program.js';
import { ada, defaultGuild, GENERAL, GUILD } from '../../support/discordHarness.js';
import { startFakeDiscord } from '../../support/fakeDiscord.js';
import { promptsAvatar, promptText, startFakeOpenAiServer } from '../../support/fakeOpenAiServer.js';

// The timeout guards a hang (real timers, real sockets): a loaded machine is only slower.
const until = (check: () => boolean | undefined) =>
  vi.waitFor(
    () => {
      if (!check()) throw new Error('not yet');
    },
    { timeout: 60_000, interval: 10 },
  );

describe('troupe discord: an avatar is prompted with what it witnessed', () => {
  it('a summoned avatar never sees what was said before it arrived, beyond the backfill', async () => {
    const model = await startFakeOpenAiServer();
    let n = 0;
    model.respondWith(() => ({ text: `reply${++n}` }));
    const discord = await startFakeDiscord({ guilds: [defaultGuild] });
    const dir = await mkdtemp(join(tmpdir(), 'troupe-discord-witness-'));
    const avatars = join(dir, 'avatars.yaml');
    await writeFile(
      avatars,
      'avatars:\n' +
        `  - { id: nova, name: Nova, persona: "An astronomer.", residentIn: ["discord:${GENERAL}"] }\n` +
        '  - { id: rex, name: Rex, persona: "A dinosaur." }\n',
    );
    let stdout = '';
    let stop: (signal: string) => void = () => undefined;
    const io: CliIo = {
      stdout: (t) => (stdout += t),
      stderr: (t) => (stdout += t),
      env: {
        TROUPE_STORE: 'memory',
        LOG_LEVEL: 'silent',
        DISCORD_TOKEN: discord.token,
        DISCORD_API_URL: discord.restApi,
        TROUPE_MODEL_BASE_URL: model.baseUrl,
        TROUPE_MODEL: 'fake',
        TROUPE_MODEL_RETRIES: '0',
        TROUPE_WITNESS_BACKFILL: '1',
      },
      isTTY: false,
      stopSignal: () => new Promise<string>((resolve) => (stop = resolve)),
    };
    const code = runCli(['discord', '--guild', GUILD, '--avatars', avatars], io);
    try {
      await until(() => stdout.includes('Troupe is on Discord'));
      const answersBy = (name: string) => discord.executions.filter((e) => e.username === name).length;
      for (const word of ['AARDVARK', 'BADGER']) {
        const before = answersBy('Nova');
        discord.postMessage({ channelId: GENERAL, author: ada, content: `Nova, the word is ${word}` });
        await until(() => answersBy('Nova') > before);
      }
      const summon = discord.interact({
        channelId: GENERAL,
        user: ada,
        command: 'summon',
        options: { avatar: 'rex' },
      });
      await summon.answered(2);
      await until(() => answersBy('Rex') >= 1);
      const before = answersBy('Rex');
      discord.postMessage({ channelId: GENERAL, author: ada, content: 'Rex, the word now is CHEETAH' });
      await until(() => answersBy('Rex') > before);

      const rex = model.chatRequests().filter(promptsAvatar('Rex')).map(promptText);
      const nova = model.chatRequests().filter(promptsAvatar('Nova')).map(promptText);
      expect(rex.length).toBeGreaterThanOrEqual(2);
      for (const prompt of rex) {
        expect(prompt).not.toContain('AARDVARK');
        expect(prompt).not.toContain('BADGER');
      }
      // The arrival brings the last message said before it (Nova's answer to BADGER), no more.
      expect(rex[0]).toContain('Nova: reply2');
      expect(rex.at(-1)).toContain('CHEETAH');
      // The resident, present throughout, saw everything.
      expect(nova.at(-1) ?? '').toContain('BADGER');
    } finally {
      stop('SIGTERM');
      await code;
      await discord.close();
      await model.close();
    }
  }, 120_000);
});
