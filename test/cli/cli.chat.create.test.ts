/**
 * `troupe chat`: `/summon <a name nobody has>` creates the avatar. Against a local
 * OpenAI-compatible server that records requests: the persona and emoji come from a structured
 * output request, the new avatar's prompts carry that persona, it is stored (a second session on
 * the same store knows it), `/forget` removes it, and with TROUPE_SUMMON_CREATES=false nothing is
 * created.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { chatInProcess } from '../support/cliInProcess.js';
import {
  type ChatRequestBody,
  promptsAvatar,
  promptText,
  startFakeOpenAiServer,
} from '../support/fakeOpenAiServer.js';

const isSketch = (body: ChatRequestBody) => body.response_format?.json_schema?.name === 'avatar_sketch';
const PERSONA = 'A grey wizard who speaks in riddles about second breakfasts and fireworks.';

function respond(body: ChatRequestBody) {
  return isSketch(body)
    ? { json: { name: 'Gandalf', emoji: '🧙', persona: PERSONA, topics: ['riddles', 'second breakfast'] } }
    : { text: `${promptsAvatar('Gandalf')(body) ? 'Gandalf' : 'Nova'} says hi.` };
}

async function setup() {
  const dir = await mkdtemp(join(tmpdir(), 'troupe-create-chat-'));
  const avatars = join(dir, 'avatars.yaml');
  await writeFile(
    avatars,
    'avatars:\n  - { id: nova, name: Nova, emoji: "🔭", persona: "An astronomer.", residentIn: ["terminal:den"] }\n',
  );
  const fake = await startFakeOpenAiServer();
  fake.respondWith(respond);
  const env = {
    NO_COLOR: '1',
    TROUPE_DATA_DIR: join(dir, 'store'),
    TROUPE_MODEL_BASE_URL: fake.baseUrl,
    TROUPE_MODEL: 'fake',
    TROUPE_MODEL_RETRIES: '0',
  };
  const args = ['--avatars', avatars, '--channel', 'den', '--name', 'Sam'];
  return { fake, env, args };
}

describe('troupe chat: summoning a name nobody has creates the avatar', () => {
  it('the model writes it, it greets, it is stored across sessions, and /forget removes it', async () => {
    const { fake, env, args } = await setup();
    try {
      const first = await chatInProcess(
        args,
        ['/summon gandalf', 'Gandalf, who are you?', '/avatars', '/quit'],
        env,
      );
      expect(first.code, first.stderr).toBe(0);
      expect(first.stdout).toContain(`✨ New avatar 🧙 Gandalf (the model wrote its persona): ${PERSONA}`);
      const sketch = fake.chatRequests().filter(isSketch);
      expect(sketch).toHaveLength(1);
      // The schema asks for a third-person persona and topics, as the avatars file's personas are.
      const schema = JSON.stringify(sketch[0]?.response_format?.json_schema?.schema);
      expect(schema).toContain('in the third person');
      expect(schema).toContain('"topics"');
      expect(promptText(sketch[0] as ChatRequestBody)).toContain(
        'Name: gandalf\nSummoned by: Sam\nCharacters already there: Nova',
      );
      // Its prompts speak as the persona the model wrote.
      const gandalf = fake.chatRequests().filter(promptsAvatar('Gandalf'));
      expect(gandalf.length).toBeGreaterThanOrEqual(2);
      expect(promptText(gandalf[0] as ChatRequestBody)).toContain(PERSONA);
      expect(first.stdout).toMatch(/Gandalf: Gandalf says hi\./u);
      expect(first.stdout).toMatch(
        /🧙 Gandalf \(gandalf-[0-9a-f]{6}; here, created by Sam on \d{4}-\d\d-\d\d\)/u,
      );

      fake.reset();
      fake.respondWith(respond);
      const second = await chatInProcess(
        args,
        ['/avatars', 'Gandalf, still here?', '/forget Gandalf', '/quit'],
        env,
      );
      expect(second.code, second.stderr).toBe(0);
      expect(second.stdout).toContain('Created by summoning: 🧙 Gandalf — /forget <name> removes one');
      expect(second.stdout).toContain('Still here from last time: 🧙 Gandalf.');
      expect(second.stdout).toMatch(/🧙 Gandalf \(gandalf-[0-9a-f]{6}; here, created by Sam/u);
      expect(fake.chatRequests().filter(promptsAvatar('Gandalf')).length).toBeGreaterThanOrEqual(1);
      expect(fake.chatRequests().filter(isSketch)).toEqual([]);
      expect(second.stdout).toMatch(/Gandalf: Gandalf says hi\./u);
      expect(second.stdout).toContain('🧙 Gandalf is forgotten: gone from every channel and the store.');

      const third = await chatInProcess(args, ['/avatars', '/forget Nova', '/quit'], env);
      expect(third.stdout).not.toContain('Gandalf');
      expect(third.stdout).toContain(
        '✗ Nova comes from the avatars file, not from a summon; remove it from the file instead.',
      );
    } finally {
      await fake.close();
    }
  });

  it('with TROUPE_SUMMON_CREATES=false nothing is created and the avatars there are are listed', async () => {
    const { fake, env, args } = await setup();
    try {
      const chat = await chatInProcess(args, ['/summon Gandalf', '/quit'], {
        ...env,
        TROUPE_SUMMON_CREATES: 'false',
      });
      expect(chat.code, chat.stderr).toBe(0);
      expect(chat.stdout).toContain('✗ No avatar called "Gandalf". Avatars: 🔭 Nova (nova).');
      expect(fake.chatRequests()).toEqual([]);
    } finally {
      await fake.close();
    }
  });

  it('a model that answers with something unusable leaves the template persona, and says so', async () => {
    const { fake, env, args } = await setup();
    fake.respondWith((body) => (isSketch(body) ? { status: 500, message: 'boom' } : { text: 'hello.' }));
    try {
      const chat = await chatInProcess(args, ['/summon Radagast', '/quit'], env);
      expect(chat.code, chat.stderr).toBe(0);
      expect(chat.stdout).toContain(
        '✨ New avatar Radagast (a template persona: no language model wrote it): A newcomer called Radagast',
      );
    } finally {
      await fake.close();
    }
  });

  it('offline: the template writes it; a prefix of several avatars asks for more instead of creating one', async () => {
    const chat = await chatInProcess(
      ['--avatars', 'examples/chat/avatars.yaml', '--name', 'Sam'],
      ['/summon Radagast', '/summon R', '/summon rad', '/quit'],
      { TROUPE_STORE: 'memory', NO_COLOR: '1' },
    );
    expect(chat.code, chat.stderr).toBe(0);
    expect(chat.stdout).toContain(
      '✨ New avatar Radagast (a template persona: no language model wrote it): A newcomer called Radagast, summoned into this chat by Sam',
    );
    expect(chat.stdout).toMatch(/\[1\] Radagast: .+ · rung greeting — Radagast was summoned by Sam/u);
    expect(chat.stdout).toContain('✗ "R" could be 🦖 Rex or Radagast; type more of the name.');
    expect(chat.stdout.match(/✨ New avatar/gu)).toHaveLength(1);
  });
});
