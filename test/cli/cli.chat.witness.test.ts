import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { chatInProcess } from '../support/cliInProcess.js';
import { promptsAvatar, promptText, startFakeOpenAiServer } from '../support/fakeOpenAiServer.js';

describe('troupe chat: an avatar is prompted with what it witnessed', () => {
  it('never shows an avatar what was said before it arrived or while it was away, beyond the backfill', async () => {
    const fake = await startFakeOpenAiServer();
    let n = 0;
    fake.respondWith(() => ({ text: `reply${++n}` }));
    try {
      const dir = await mkdtemp(join(tmpdir(), 'troupe-witness-'));
      const avatars = join(dir, 'avatars.yaml');
      await writeFile(
        avatars,
        'avatars:\n' +
          '  - { id: nova, name: Nova, persona: "An astronomer.", residentIn: ["terminal:den"] }\n' +
          '  - { id: rex, name: Rex, persona: "A dinosaur." }\n',
      );
      const chat = await chatInProcess(
        ['--avatars', avatars, '--channel', 'den', '--name', 'Sam', '--verbose'],
        [
          'Nova, the early word is AARDVARK',
          'Nova, the next word is BADGER',
          '/summon Rex',
          'Rex, the word now is CHEETAH',
          '/dismiss Rex',
          'Nova, while Rex is away: DINGO',
          'Nova, and also EMU',
          '/summon Rex',
          'Rex, what words do you know?',
          '/quit',
        ],
        {
          TROUPE_STORE: 'memory',
          NO_COLOR: '1',
          TROUPE_MODEL_BASE_URL: fake.baseUrl,
          TROUPE_MODEL: 'fake',
          TROUPE_MODEL_RETRIES: '0',
          TROUPE_WITNESS_BACKFILL: '1',
        },
      );
      expect(chat.code, chat.stderr).toBe(0);
      const requests = fake.chatRequests();
      const rex = requests.filter(promptsAvatar('Rex')).map(promptText);
      const nova = requests.filter(promptsAvatar('Nova')).map(promptText);
      expect(rex.length).toBeGreaterThanOrEqual(3);
      for (const prompt of rex) {
        expect(prompt).not.toContain('AARDVARK');
        expect(prompt).not.toContain('BADGER');
        expect(prompt).not.toContain('DINGO');
        expect(prompt).not.toContain('EMU');
      }
      // Each arrival brings the last message said before it (TROUPE_WITNESS_BACKFILL=1), no more.
      const greetings = rex.filter((p) => p.includes('You have just been summoned'));
      expect(greetings).toHaveLength(2);
      expect(greetings[0]).toMatch(/\nNova: reply2$/u);
      expect(greetings[1]).toContain('\nNova: reply13');
      expect(greetings[1]).not.toContain('reply12');
      // What it heard while present stays with it after it left and came back.
      expect(rex.at(-1)).toContain('CHEETAH');
      // --verbose says per turn how many messages the avatar saw: Rex's first greeting saw one.
      expect(chat.stdout).toMatch(/\n {3}Rex saw 1 message\n/u);
      expect(chat.stdout).toMatch(/\n {3}Nova saw \d+ messages\n/u);
      // The resident, present throughout, saw everything.
      expect(nova.at(-1)).toContain('AARDVARK');
      expect(nova.at(-1)).toContain('CHEETAH');
    } finally {
      await fake.close();
    }
  });
});
