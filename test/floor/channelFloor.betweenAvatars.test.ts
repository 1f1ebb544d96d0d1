/**
 * Between avatars only naming draws an answer: an avatar's message that names nobody is answered
 * by no one, not even by an avatar holding guaranteed turns (those answer people); an avatar that
 * said goodbye is not drawn back by another avatar, only by a person.
 */
import { describe, expect, it } from 'vitest';
import { ANN, FloorScene, onlyClaim, quiet, turns } from '../support/floorScene.js';

describe("an avatar's message that names nobody", () => {
  it('draws no answer, even from an avatar holding guaranteed turns', () => {
    const s = new FloorScene();
    s.fail(1_500, onlyClaim(s.say(1_000, ANN, 'Luna, hi')).turnId);
    expect(s.presence('luna')).toMatchObject({ summonTurns: 2, lastSpokeAt: null });
    expect(turns(s.avatarSays(2_000, 'milo', 'What a day it has been.'))).toEqual([]);
  });
});

describe('an avatar that said goodbye', () => {
  it('is not drawn back by another avatar naming it, but a person brings it back', () => {
    const s = new FloorScene();
    s.deliver(2_000, onlyClaim(s.say(1_000, ANN, 'Luna, hi')).turnId, 'Goodbye everyone!');
    const wait = s.avatarSays(2_500, 'milo', 'Luna, wait!');
    expect(turns(wait)).toEqual([]);
    expect(quiet(wait)).toEqual([{ avatarId: 'luna', reason: 'said-goodbye' }]);
    expect(turns(s.say(3_000, ANN, 'Luna, come back'))).toEqual(['luna@mention']);
    // Back in the conversation: named by Milo while answering Ann, it is busy, not gone.
    expect(quiet(s.avatarSays(3_500, 'milo', 'Luna, welcome back'))).toEqual([
      { avatarId: 'luna', rung: 'thread', reason: 'busy' },
    ]);
  });
});
