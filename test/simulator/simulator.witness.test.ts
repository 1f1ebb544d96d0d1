/**
 * The witness rule in simulations: each delivered turn carries how many messages the avatar's
 * prompt would have held, in `--json` transcripts and, with `--verbose`, in the printed one.
 */
import { describe, expect, it } from 'vitest';
import { parseScenarioText, runScenario, type TranscriptEntry } from '../../src/simulator/index.js';

type AvatarEntry = Extract<TranscriptEntry, { type: 'avatar' }>;

/** Eight lines by Sam, then Rex summoned, dismissed, three more lines, and Rex summoned again. */
const scenario = (backfill: number) =>
  parseScenarioText(`
name: late-arrival
channel: lounge
config: { TROUPE_WITNESS_BACKFILL: ${backfill}, SUMMON_FOLLOWUP_DELAY: 0 }
generationLatency: 1s
avatars:
  - { id: rex, name: Rex, persona: a retired T. rex }
humans:
  - { id: sam, name: Sam }
script:
${Array.from({ length: 8 }, (_, i) => `  - { after: 1s, human: sam, say: "before ${i + 1}" }`).join('\n')}
  - { after: 1s, summon: rex, by: sam }
  - { after: 30s, dismiss: rex }
${Array.from({ length: 3 }, (_, i) => `  - { after: 1s, human: sam, say: "away ${i + 1}" }`).join('\n')}
  - { after: 1s, summon: rex, by: sam }
  - { wait: 1m }
`);

/** Per delivered turn of Rex: its kind and how many messages it saw. */
function rexTurns(backfill: number): [string | undefined, number | undefined][] {
  const { transcript } = runScenario(scenario(backfill));
  return transcript
    .filter((e): e is AvatarEntry => e.type === 'avatar' && e.source === 'offline')
    .map((e) => [e.kind, e.seen]);
}

describe('what a simulated avatar saw', () => {
  it('an avatar summoned late sees the backfill and what came after, never the rest', () => {
    const turns = rexTurns(2);
    // First stay: the 2 backfilled lines; its follow-up also sees its own greeting.
    expect(turns[0]).toEqual(['greeting', 2]);
    expect(turns[1]).toEqual(['follow-up', 3]);
    const back = turns.findIndex(([kind], i) => i > 1 && kind === 'greeting');
    // Back again: the first stay (2 + its own lines) and 2 of the 3 lines said while it was away.
    const [, seenBack] = turns[back] ?? [];
    const ownBefore = turns.slice(0, back).length;
    expect(seenBack).toBe(2 + ownBefore + 2);
  });

  it('with no backfill the first greeting sees nothing said before', () => {
    expect(rexTurns(0)[0]).toEqual(['greeting', 0]);
  });
});
