import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { defaultCoordinationConfig } from '../src/config/coordinationConfig.js';
import { ChannelFloor } from '../src/machines/channelFloor.js';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');

describe('README', () => {
  it('starts with the two commands: the main job and the tests', () => {
    const firstBlock = readme.split('```')[1] ?? '';
    expect(firstBlock).toContain('npm ci && npm start');
    expect(firstBlock).toContain('npm test');
  });

  it('documents every configuration variable with its current default', () => {
    const table = execFileSync('npx', ['tsx', 'scripts/print-config-table.ts'], { encoding: 'utf8' });
    for (const row of table.trim().split('\n')) expect(readme).toContain(row);
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
