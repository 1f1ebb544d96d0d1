/**
 * Which thread a message belongs to: an avatar's message to its own thread (none if it is in
 * none), a person's message to the thread of the first avatar it names that is in one; a reply
 * opens a reply thread only when it names nobody else.
 */
import { describe, expect, it } from 'vitest';
import { ANN, BOB, FloorScene, onlyClaim, quiet, turns } from '../support/floorScene.js';
import { ofType } from '../support/floorTraffic.js';

/** Luna and Milo talk in thread ch:th1; Milo spoke last and Luna's answer failed. */
function lunaAndMiloInThread(): FloorScene {
  const s = new FloorScene({ mentionGrantTurns: 0 });
  const luna = onlyClaim(s.say(1_000, ANN, 'Luna, hi'));
  const milo = onlyClaim(s.deliver(2_000, luna.turnId, 'Milo, thoughts?'));
  const back = onlyClaim(s.deliver(3_000, milo.turnId, 'I like it.'));
  s.fail(4_000, back.turnId);
  return s;
}

describe('the thread a message belongs to', () => {
  it("an avatar outside every thread speaking unaddressed is in none: nobody's thread answers it", () => {
    const s = lunaAndMiloInThread();
    const effects = s.avatarSays(5_000, 'zed', 'Interesting times.');
    expect(turns(effects)).toEqual([]);
    expect(quiet(effects)).toEqual([]);
  });

  it('a person naming several continues the thread of the first named that is in one', () => {
    const s = lunaAndMiloInThread();
    expect(turns(s.say(5_000, BOB, 'Zed and Luna, what now?'))).toEqual(['luna@thread', 'zed@mention']);
  });
});

describe('a reply between avatars', () => {
  const reply = { replyTo: { messageId: 'luna-1', avatarId: 'luna' } };

  it('opens a reply thread with the avatar replied to', () => {
    const s = new FloorScene();
    const effects = s.deliver(2_000, onlyClaim(s.say(1_000, ANN, 'Milo, hi')).turnId, 'Indeed', reply);
    expect(ofType(effects, 'thread.opened')).toMatchObject([
      { mode: 'reply', participants: ['milo', 'luna'] },
    ]);
  });

  it('naming someone else too, opens a mention thread with both', () => {
    const s = new FloorScene();
    const effects = s.deliver(
      2_000,
      onlyClaim(s.say(1_000, ANN, 'Milo, hi')).turnId,
      'Zed, look at this',
      reply,
    );
    expect(ofType(effects, 'thread.opened')).toMatchObject([
      { mode: 'mention', participants: ['milo', 'luna', 'zed'] },
    ]);
  });
});
