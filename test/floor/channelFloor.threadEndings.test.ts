/**
 * What the turn that ends a thread, or lands after its thread ended, may still set off; a goodbye
 * opens no thread; a message naming only absent avatars is answered by nobody in their place.
 */
import { describe, expect, it } from 'vitest';
import { ANN, FloorScene, onlyClaim, quiet, turns } from '../support/floorScene.js';
import { ofType } from '../support/floorTraffic.js';

describe('the turn that ends a thread', () => {
  it('does not restart it by naming its partner, but someone outside it still answers', () => {
    const s = new FloorScene({ botMentionThreadTurns: 1 });
    const luna = onlyClaim(s.say(1_000, ANN, 'Luna, hi'));
    const milo = onlyClaim(s.deliver(2_000, luna.turnId, 'Milo, thoughts?'));
    const effects = s.deliver(3_000, milo.turnId, 'Luna and Zed, fine');
    expect(ofType(effects, 'thread.ended')).toMatchObject([
      { threadId: 'ch:th1', outcome: 'exhausted', turns: 1 },
    ]);
    expect(quiet(effects)).toEqual([{ avatarId: 'luna', reason: 'thread-exhausted' }]);
    expect(onlyClaim(effects)).toMatchObject({ avatarId: 'zed', rung: 'mention', lane: 'cascade' });
    expect(ofType(effects, 'thread.opened')).toEqual([]);
  });

  it('landing after its thread expired, it draws no answer from anyone, and belongs to no live thread', () => {
    const s = new FloorScene();
    const luna = onlyClaim(s.say(1_000, ANN, 'Luna, hi'));
    const milo = onlyClaim(s.deliver(2_000, luna.turnId, 'Milo, thoughts?'));
    const effects = s.deliver(200_000, milo.turnId, 'Luna and Zed, fine');
    expect(ofType(effects, 'thread.ended')).toMatchObject([{ at: 182_000, outcome: 'expired' }]);
    expect(ofType(effects, 'turn.consumed')).toEqual([
      {
        type: 'turn.consumed',
        at: 200_000,
        turnId: milo.turnId,
        avatarId: 'milo',
        rung: 'thread',
        messageId: `${milo.turnId}/m`,
      },
    ]);
    expect(turns(effects)).toEqual([]);
    expect(quiet(effects)).toEqual([
      { avatarId: 'luna', reason: 'thread-ended' },
      { avatarId: 'zed', reason: 'thread-ended' },
    ]);
  });
});

describe('a goodbye between avatars', () => {
  it('opens no thread: the avatar named answers once, outside any thread', () => {
    const s = new FloorScene();
    const luna = onlyClaim(s.say(1_000, ANN, 'Luna, hi'));
    const effects = s.deliver(2_000, luna.turnId, 'Milo, goodbye!');
    expect(onlyClaim(effects)).toMatchObject({ avatarId: 'milo', lane: 'cascade' });
    expect(onlyClaim(effects).threadId).toBeUndefined();
    expect(s.floor.view().threads).toEqual([]);
  });
});

describe('a message naming only avatars who are not here', () => {
  it('from an avatar: every other present avatar stays quiet, and the author is not listed', () => {
    const s = new FloorScene({}, ['luna', 'milo']);
    expect(quiet(s.avatarSays(1_000, 'luna', 'Zed, are you there?'))).toEqual([
      { avatarId: 'zed', reason: 'not-present' },
      { avatarId: 'milo', reason: 'addressed-absent' },
    ]);
  });

  it("sent late, it is decided at the floor's time, which never runs backwards", () => {
    const s = new FloorScene({}, ['luna', 'milo']);
    s.tick(5_000);
    const effects = s.say(1_000, ANN, 'Zed, are you there?');
    expect(ofType(effects, 'candidate.suppressed').map((e) => [e.avatarId, e.reason, e.at])).toEqual([
      ['zed', 'not-present', 5_000],
      ['luna', 'addressed-absent', 5_000],
      ['milo', 'addressed-absent', 5_000],
    ]);
  });
});
