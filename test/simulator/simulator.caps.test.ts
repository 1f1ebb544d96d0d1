/**
 * Caps in simulations: a scenario's `config:` and the environment set them; the transcript shows
 * who was held back and why, the notice a person got, and that nothing bursts out at the reset.
 */
import { describe, expect, it } from 'vitest';
import { loadScenarioFile, runScenario, type TranscriptEntry } from '../../src/simulator/index.js';
import { runTroupe } from '../support/runTroupe.js';

const HOUR = 3_600_000;
type Entry<T extends TranscriptEntry['type']> = Extract<TranscriptEntry, { type: T }>;
const of = <T extends TranscriptEntry['type']>(entries: readonly TranscriptEntry[], type: T) =>
  entries.filter((e): e is Entry<T> => e.type === type);

describe('examples/channel-hour-cap.yaml', () => {
  it('keeps avatar messages within 3 per rolling hour, tells each person once, and answers after the hour', async () => {
    const result = runScenario(await loadScenarioFile('examples/channel-hour-cap.yaml'));
    const avatarTimes = of(result.transcript, 'avatar').map((e) => e.t);
    for (const t of avatarTimes)
      expect(avatarTimes.filter((u) => u > t - HOUR && u <= t).length).toBeLessThanOrEqual(3);
    expect(avatarTimes).toHaveLength(4);
    expect(of(result.transcript, 'cap.notice').map((e) => [e.avatarId, e.to, e.reason])).toEqual([
      ['bo', 'Kim', 'cap-channel-hour'],
      ['bo', 'Lee', 'cap-channel-hour'],
    ]);
    // Nothing said between the last notice and the next question an hour later.
    const lastQuiet = of(result.transcript, 'human').at(-2)?.t ?? 0;
    const next = of(result.transcript, 'human').at(-1)?.t ?? 0;
    expect(avatarTimes.filter((t) => t > lastQuiet && t < next)).toEqual([]);
    expect(result.summary.suppressed.byReason['cap-channel-hour']).toBe(3);
  });
});

describe('troupe simulate', () => {
  it('reads the channel cap from the environment, and says why avatars were held back', async () => {
    const plain = await runTroupe(['simulate', 'examples/group-mention.yaml']);
    expect(plain.stdout).not.toContain('cap-channel-hour');
    const capped = await runTroupe(['simulate', 'examples/group-mention.yaml'], {
      TROUPE_CHANNEL_MAX_AVATAR_MESSAGES_PER_HOUR: '2',
    });
    expect(capped.code).toBe(0);
    expect(capped.stdout).toMatch(/Suppressed candidates: \d+ — .*cap-channel-hour/u);
  });

  it('refuses a cap that is not a number, naming it', async () => {
    const bad = await runTroupe(['simulate', 'examples/group-mention.yaml'], {
      TROUPE_MAX_COST_PER_DAY_USD: 'lots',
    });
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain(
      'TROUPE_MAX_COST_PER_DAY_USD="lots" is not allowed; expected an amount of US dollars',
    );
  });
});
