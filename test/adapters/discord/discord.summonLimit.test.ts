import { describe, expect, it } from 'vitest';
import { ada, RANDOM, startDiscordHarness, stopAfterEach } from '../../support/discordHarness.js';

const { running } = stopAfterEach();

async function summonText(
  h: Awaited<ReturnType<typeof startDiscordHarness>>,
  command: 'summon' | 'dismiss',
  avatar: string,
): Promise<string> {
  const answers = await h.fake
    .interact({ channelId: RANDOM, user: ada, command, options: { avatar } })
    .answered(command === 'summon' ? 2 : 1);
  return answers.at(-1)?.content ?? '';
}

describe('the daily summon limit counts avatars brought in', () => {
  it('summoning an avatar that is already here does not use up a summon; a new arrival still does', async () => {
    const now = Date.parse('2026-11-25T22:30:00Z');
    const h = await startDiscordHarness({ bot: { summon: { perDay: 1 }, now: () => now } });
    running.push(h);
    expect(await summonText(h, 'summon', 'rex')).toMatch(/Rex is here/u);
    // Called again while here: it answers, and the person's one summon is not spent twice.
    expect(await summonText(h, 'summon', 'rex')).toMatch(/Rex is here/u);
    expect(await summonText(h, 'summon', 'rex')).toMatch(/Rex is here/u);
    expect(await summonText(h, 'summon', 'nova')).toBe(
      'You have used your 1 summons for today. You can summon again after midnight UTC (in 1h 30m).',
    );
  });

  it('an avatar dismissed and summoned back is brought in again, and that counts', async () => {
    const h = await startDiscordHarness({ bot: { summon: { perDay: 2 } } });
    running.push(h);
    expect(await summonText(h, 'summon', 'rex')).toMatch(/Rex is here/u);
    expect(await summonText(h, 'dismiss', 'rex')).toMatch(/Rex leaves this channel\./u);
    expect(await summonText(h, 'summon', 'rex')).toMatch(/Rex is here/u);
    expect(await summonText(h, 'summon', 'nova')).toMatch(/used your 2 summons for today/u);
  });
});
