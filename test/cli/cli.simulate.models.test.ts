/**
 * `troupe simulate` with avatars that name a model: a name no live run could build is refused at
 * start as `troupe chat` refuses it; any other is checked and played offline, and the transcript
 * says so. No key is needed and no provider is called.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type CliIo, runCli } from '../../src/cli/program.js';

async function inProcess(args: string[], env: Record<string, string | undefined> = {}) {
  let stdout = '';
  let stderr = '';
  const io: CliIo = { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t), env, isTTY: false };
  const code = await runCli(args, io);
  return { code, stdout, stderr };
}

/** A two-avatar scenario: Luna names `lunaModel`, Milo names none. */
async function scenarioFile(lunaModel: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'troupe-simulate-models-'));
  const file = join(dir, 'models.yaml');
  await writeFile(
    file,
    [
      'name: models',
      'avatars:',
      `  - { id: luna, name: Luna, present: true, model: "${lunaModel}" }`,
      '  - { id: milo, name: Milo, present: true }',
      'humans:',
      '  - { id: sam, name: Sam }',
      'script:',
      '  - { at: 0s, human: sam, say: "Luna, hello" }',
    ].join('\n'),
  );
  return file;
}

describe('troupe simulate with avatars naming a model', () => {
  it('refuses an unknown provider at start, naming the avatar, with the code and words of troupe chat', async () => {
    const { code, stdout, stderr } = await inProcess(['simulate', await scenarioFile('opneai:gpt-4o-mini')]);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toBe(
      'error TROUPE_AVATAR_MODEL_INVALID: Avatar Luna (luna) has model "opneai:gpt-4o-mini": unknown provider "opneai" (known: openai, anthropic, openai-compatible, offline).\n',
    );
  });

  it('refuses a profile TROUPE_MODEL_PROFILES does not define, and takes one it does', async () => {
    const file = await scenarioFile('poet');
    const refused = await inProcess(['simulate', file]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(
      'error TROUPE_AVATAR_MODEL_INVALID: Avatar Luna (luna) has model "poet": no provider or profile of that name',
    );
    const profiles = { TROUPE_MODEL_PROFILES: '{"poet":{"provider":"anthropic"}}' };
    const taken = await inProcess(['simulate', file], profiles);
    expect(taken.code).toBe(0);
    expect(taken.stdout).toContain(
      'Models: every turn is played offline by the scripted model (offline:scripted), whatever an avatar names: Luna names poet; the others, the default model.',
    );
  });

  it('plays a hosted provider offline without its key, and says which model each avatar names', async () => {
    const { code, stdout, stderr } = await inProcess([
      'simulate',
      await scenarioFile('openai:gpt-4o'),
      '--json',
    ]);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const out = JSON.parse(stdout);
    expect(out.models).toEqual([
      { avatarId: 'luna', name: 'Luna', named: 'openai:gpt-4o', played: 'offline:scripted' },
      { avatarId: 'milo', name: 'Milo', played: 'offline:scripted' },
    ]);
    expect(out.transcript.filter((e: { type: string }) => e.type === 'avatar')).toMatchObject([
      { avatarId: 'luna', source: 'offline' },
    ]);
  });

  it('says in --verbose that every turn is played offline, when no avatar names a model', async () => {
    const plain = await inProcess(['simulate', 'examples/group-mention.yaml']);
    expect(plain.stdout).not.toContain('Models:');
    const verbose = await inProcess(['simulate', 'examples/group-mention.yaml', '--verbose']);
    expect(verbose.stdout).toContain(
      'Models: every turn is played offline by the scripted model (offline:scripted); no avatar names a model of its own.',
    );
  });

  it('refuses a TROUPE_MODEL_PROFILES that does not parse', async () => {
    const { code, stderr } = await inProcess(['simulate', await scenarioFile('offline')], {
      TROUPE_MODEL_PROFILES: '{not json',
    });
    expect(code).toBe(2);
    expect(stderr).toContain('TROUPE_CONFIG_INVALID');
    expect(stderr).toContain('TROUPE_MODEL_PROFILES');
  });
});
