/**
 * Between avatars only naming draws an answer: an avatar's message that names nobody is answered
 * by no one, not even by an avatar holding guaranteed turns (those answer people).
 */
import { describe, expect, it } from 'vitest';
import { ANN, FloorScene, onlyClaim, turns } from './support/floorScene.js';

describe("an avatar's message that names nobody", () => {
  it('draws no answer, even from an avatar holding guaranteed turns', () => {
    const s = new FloorScene();
    s.fail(1_500, onlyClaim(s.say(1_000, ANN, 'Luna, hi')).turnId);
    expect(s.presence('luna')).toMatchObject({ summonTurns: 2, lastSpokeAt: null });
    expect(turns(s.avatarSays(2_000, 'milo', 'What a day it has been.'))).toEqual([]);
  });
});
