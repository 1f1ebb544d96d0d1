/** The studio's playground avatars write with the model they name (`model:` in the scenario). */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SimulatedClock } from '../../src/actors/clock.js';
import { modelFromEnv } from '../../src/adapters/llm/modelFromEnv.js';
import { silentLogger } from '../../src/logging/logger.js';
import { type OpenedStudio, openStudio } from '../../src/studio/openStudio.js';

async function scenarioFile(lunaModel: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'troupe-studio-models-'));
  const file = join(dir, 'playground.yaml');
  await writeFile(
    file,
    [
      'name: playground',
      'channel: playground',
      'avatars:',
      `  - { id: luna, name: Luna, present: true, model: "${lunaModel}" }`,
      '  - { id: milo, name: Milo, present: true }',
      'humans:',
      '  - { id: sam, name: Sam }',
      'script:',
      '  - { wait: 1s }',
    ].join('\n'),
  );
  return file;
}

// A profile on a server nobody listens on: nothing here generates a turn, so it is never called.
const env = {
  TROUPE_MODEL_PROFILES:
    '{"cheap":{"provider":"openai-compatible","model":"llama3.2","baseUrl":"http://127.0.0.1:9/v1"}}',
};

const opened: OpenedStudio[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((s) => s.close()));
});

describe('the studio with avatars that name a model', () => {
  it('builds each avatar its own model with the resolver it is given; the others use the default', async () => {
    const studio = await openStudio({
      clock: new SimulatedClock(),
      port: 0,
      logger: silentLogger(),
      scenarioFile: await scenarioFile('cheap'),
      models: modelFromEnv(env).models,
    });
    opened.push(studio);
    expect(studio.runtime.modelOf('luna').id).toBe('openai-compatible:llama3.2');
    expect(studio.runtime.modelOf('milo').offline).toBe(true);
  });

  it('refuses an unknown provider at start, naming the avatar', async () => {
    await expect(
      openStudio({
        clock: new SimulatedClock(),
        port: 0,
        logger: silentLogger(),
        scenarioFile: await scenarioFile('opneai:gpt-4o'),
        models: modelFromEnv(env).models,
      }),
    ).rejects.toMatchObject({
      code: 'TROUPE_AVATAR_MODEL_INVALID',
      message: expect.stringContaining(
        'Avatar Luna (luna) has model "opneai:gpt-4o": unknown provider "opneai"',
      ),
    });
  });
});
