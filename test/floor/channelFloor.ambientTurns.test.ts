/**
 * Who answers a person's message that names nobody: an avatar holding guaranteed turns (unless it
 * spoke moments ago), else the active speaker whose turn it is (round-robin), else the best
 * initiative.
 */
import { describe, expect, it } from 'vitest';
import { ANN, BOB, FloorScene, onlyClaim, quiet, turns } from '../support/floorScene.js';

/** Luna and Milo answered Ann (delivered at `lunaAt` and `miloAt`); nobody holds guaranteed turns. */
function twoSpoke(lunaAt = 2_000, miloAt = 2_000): FloorScene {
  const s = new FloorScene({ mentionGrantTurns: 0 });
  expect(turns(s.say(1_000, ANN, 'Luna and Milo, hi'))).toEqual(['luna@mention', 'milo@mention']);
  const deliveries: [number, string][] = [
    [lunaAt, 'ch:t1'],
    [miloAt, 'ch:t2'],
  ];
  for (const [at, turnId] of deliveries.sort((a, b) => a[0] - b[0])) s.deliver(at, turnId, 'hey');
  return s;
}

describe('round-robin among the active speakers', () => {
  it('gives the turn to the speaker who spoke longest ago, the first in the roster on a tie', () => {
    const claim = onlyClaim(twoSpoke().say(200_000, BOB, 'what now'));
    expect(claim).toMatchObject({
      avatarId: 'luna',
      rung: 'round-robin',
      reason: "Luna's turn among the active speakers after Bob",
    });
    expect(onlyClaim(twoSpoke(2_500, 2_000).say(200_000, BOB, 'what now')).avatarId).toBe('milo');
  });

  it('counts a speaker as active up to exactly the window after it spoke', () => {
    expect(turns(twoSpoke().say(602_000, BOB, 'what now'))).toEqual(['luna@round-robin']);
    expect(turns(twoSpoke().say(602_001, BOB, 'what now'))).toEqual(['luna@initiative']);
  });

  it('skips speakers still cooling down, and with all of them cooling the initiative rung decides', () => {
    // Both spoke within the cooldown: Zed, who never spoke, takes the initiative.
    expect(turns(twoSpoke(2_000, 3_000).say(50_000, BOB, 'what now'))).toEqual(['zed@initiative']);
  });
});

describe('the summon rung: an avatar holding guaranteed turns answers what names nobody', () => {
  it('holds its turns through a failed answer and uses one on the next message', () => {
    const s = new FloorScene();
    const t1 = onlyClaim(s.say(1_000, ANN, 'Luna, hi'));
    s.fail(1_500, t1.turnId);
    expect(s.presence('luna')).toMatchObject({ summonTurns: 2, lastSpokeAt: null });
    const claim = onlyClaim(s.say(2_000, ANN, 'anyone?'));
    expect(claim).toMatchObject({
      avatarId: 'luna',
      rung: 'summon',
      reason: 'Luna has 2 guaranteed summon turns left',
    });
    expect(ofConsumed(s.deliver(3_000, claim.turnId, 'yes'))).toEqual({ rung: 'summon', summonTurnsLeft: 1 });
    expect(onlyClaim(s.say(40_000, BOB, 'and now?')).reason).toBe('Luna has 1 guaranteed summon turn left');
  });

  it('waits out the recent-summon cooldown after speaking, while another rung or avatar answers', () => {
    const spoke = () => {
      const s = new FloorScene();
      const t1 = onlyClaim(s.say(1_000, ANN, 'Luna, hi'));
      s.deliver(3_000, t1.turnId, 'hello');
      return s;
    };
    const early = spoke().say(32_999, BOB, 'and then?');
    expect(quiet(early)).toEqual([{ avatarId: 'luna', rung: 'summon', reason: 'cooldown' }]);
    expect(turns(early)).toEqual(['milo@initiative']);
    expect(onlyClaim(spoke().say(33_000, BOB, 'and then?'))).toMatchObject({
      avatarId: 'luna',
      rung: 'summon',
      reason: 'Luna has 2 guaranteed summon turns left',
    });
  });

  it('the person it answered keeps talking to it: the affinity rung, while the summon rung waits', () => {
    const s = new FloorScene();
    const t1 = onlyClaim(s.say(1_000, ANN, 'Luna, hi'));
    s.deliver(3_000, t1.turnId, 'hello');
    const effects = s.say(10_000, ANN, 'and then?');
    expect(quiet(effects)).toEqual([{ avatarId: 'luna', rung: 'summon', reason: 'cooldown' }]);
    expect(onlyClaim(effects)).toMatchObject({
      avatarId: 'luna',
      rung: 'affinity',
      reason: 'Ann has been talking to Luna',
    });
  });
});

function ofConsumed(effects: ReturnType<FloorScene['deliver']>) {
  const consumed = effects.find((e) => e.type === 'turn.consumed');
  return consumed?.type === 'turn.consumed'
    ? { rung: consumed.rung, summonTurnsLeft: consumed.summonTurnsLeft }
    : undefined;
}
