/**
 * What a granted turn tells its generator about the moment: who else is here, who it talks with
 * in its thread, which turn of how many, the thread's mood once a turn was scored, and whether it
 * is the last turn allowed.
 */
import { describe, expect, it } from 'vitest';
import { ANN, FloorScene, onlyClaim } from '../support/floorScene.js';

describe('the context of a thread turn', () => {
  it('gives no mood before any turn of the thread was scored, and the mood after', () => {
    const s = new FloorScene({ botMentionThreadTurns: 2 });
    const luna = onlyClaim(s.say(1_000, ANN, 'Luna, hi'));
    const milo = onlyClaim(s.deliver(2_000, luna.turnId, 'Milo, what do you think?'));
    expect(milo.context).toEqual({
      presentNames: ['Luna', 'Zed'],
      threadPartnerNames: ['Luna'],
      closing: false,
      triggerText: 'Milo, what do you think?',
      addressedByName: 'Luna',
      addressedById: 'luna',
      threadTurn: 1,
      threadMaxTurns: 2,
    });
    const back = onlyClaim(s.deliver(3_000, milo.turnId, 'Luna, I agree, wonderful idea.'));
    expect(back.context).toEqual({
      presentNames: ['Milo', 'Zed'],
      threadPartnerNames: ['Milo'],
      closing: true,
      triggerText: 'Luna, I agree, wonderful idea.',
      addressedByName: 'Milo',
      addressedById: 'milo',
      threadTurn: 2,
      threadMaxTurns: 2,
      threadMood: 'warm',
    });
  });
});
