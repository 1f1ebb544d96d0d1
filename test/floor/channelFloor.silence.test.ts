/**
 * When nobody answers a person's message, the floor says why for every present avatar: busy,
 * cooling down (for how long), or an initiative score below the threshold (with the score).
 */
import { describe, expect, it } from 'vitest';
import { ANN, BOB, CY, FloorScene, onlyClaim, quiet, turns } from '../support/floorScene.js';

describe('why nobody answered a message nobody addressed', () => {
  const luna = { id: 'luna', name: 'Luna', topics: ['astronomy'] };
  const milo = { id: 'milo', name: 'Milo' };
  const scene = (threshold = 0.5) =>
    new FloorScene({ initiativeThreshold: threshold }, ['luna', 'milo'], [luna, milo]);

  it('names the avatar that is mid-answer as busy, and gives the others their initiative against the threshold', () => {
    const s = scene();
    expect(onlyClaim(s.say(1_000, ANN, 'astronomy tonight'))).toMatchObject({
      avatarId: 'luna',
      rung: 'initiative',
      reason: "Luna's initiative 0.70 (attention 0.25, hunger 1.00, topic 1.00) ≥ 0.5",
    });
    expect(quiet(s.say(1_500, BOB, 'hello there'))).toEqual([
      { avatarId: 'luna', rung: 'initiative', reason: 'busy', detail: 'Luna is answering something else' },
      {
        avatarId: 'milo',
        rung: 'initiative',
        reason: 'no-initiative',
        detail: "Milo's initiative 0.40 (attention 0.25, hunger 1.00, topic 0.00) < 0.5",
      },
    ]);
  });

  it('says how many seconds an avatar that just spoke is still cooling down', () => {
    const s = scene();
    const t1 = onlyClaim(s.say(1_000, ANN, 'astronomy tonight'));
    s.deliver(2_000, t1.turnId, 'The sky is clear.');
    expect(s.presence('luna')?.cooldownUntil).toBe(122_000);
    expect(quiet(s.say(3_500, BOB, 'astronomy again'))).toEqual([
      {
        avatarId: 'luna',
        rung: 'initiative',
        reason: 'cooldown',
        detail: 'Luna is cooling down for 119s more',
      },
      {
        avatarId: 'milo',
        rung: 'initiative',
        reason: 'no-initiative',
        detail: "Milo's initiative 0.40 (attention 0.25, hunger 1.00, topic 0.00) < 0.5",
      },
    ]);
  });

  it('lets an avatar take the initiative again the moment its cooldown ends, not a millisecond later', () => {
    const s = scene(0.45);
    const t1 = onlyClaim(s.say(1_000, ANN, 'astronomy tonight'));
    s.deliver(2_000, t1.turnId, 'The sky is clear.');
    expect(quiet(s.say(121_999, BOB, 'astronomy again'))).toContainEqual({
      avatarId: 'luna',
      rung: 'initiative',
      reason: 'cooldown',
      detail: 'Luna is cooling down for 1s more',
    });
    expect(turns(s.say(122_000, CY, 'astronomy again'))).toEqual(['luna@initiative']);
  });

  it('of two avatars above the threshold, the higher score answers', () => {
    // Milo scores 0.40 and comes first in the roster; Luna's topic lifts her to 0.70.
    const s = new FloorScene({ initiativeThreshold: 0.3 }, ['milo', 'luna'], [milo, luna]);
    expect(turns(s.say(1_000, ANN, 'astronomy tonight'))).toEqual(['luna@initiative']);
  });
});
