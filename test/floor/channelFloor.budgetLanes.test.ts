/**
 * What pays for a turn between avatars: outside a thread, and for the answers to the message that
 * opens a thread, the cascade lane (with its cap on how many answer one avatar's message); inside
 * a live thread the thread; a failed turn gives its lane's turn back; a turn that spends the last
 * of its lane is told it is closing.
 */
import { describe, expect, it } from 'vitest';
import { ANN, FloorScene, onlyClaim, quiet, turns } from '../support/floorScene.js';
import { claimsIn } from '../support/floorTraffic.js';

describe('the cascade lane outside threads', () => {
  const noThreads = { botCascadeLimit: 1, botMentionCreateThread: false };

  it('pays for one answer to an avatar, marks it closing, and takes it back when the turn fails', () => {
    const s = new FloorScene(noThreads);
    const luna = onlyClaim(s.say(1_000, ANN, 'Luna, hi'));
    expect(luna).toMatchObject({ lane: 'main', context: { closing: false } });
    const zed = onlyClaim(s.deliver(2_000, luna.turnId, 'Zed, and you?'));
    expect(zed).toMatchObject({
      avatarId: 'zed',
      rung: 'mention',
      lane: 'cascade',
      context: { closing: true },
    });
    expect(s.floor.view().budget).toEqual({ anchorMessageId: 'h1', main: 2, cascade: 0 });
    s.fail(2_500, zed.turnId);
    expect(s.floor.view().budget).toEqual({ anchorMessageId: 'h1', main: 2, cascade: 1 });
  });

  it('lets at most the cascade limit answer an avatar naming several, and says so', () => {
    const s = new FloorScene(noThreads);
    const luna = onlyClaim(s.say(1_000, ANN, 'Luna, hi'));
    const effects = s.deliver(2_000, luna.turnId, 'Milo and Zed, anyone?');
    expect(turns(effects)).toEqual(['milo@mention']);
    expect(quiet(effects)).toEqual([{ avatarId: 'zed', rung: 'mention', reason: 'mention-cap' }]);
  });

  it('a person is answered even when avatars may not answer each other at all', () => {
    const s = new FloorScene({ botCascadeLimit: 0, botMentionCreateThread: false });
    const luna = onlyClaim(s.say(1_000, ANN, 'Luna, hi'));
    expect(luna.context.closing).toBe(true);
    const effects = s.deliver(2_000, luna.turnId, 'Zed, and you?');
    expect(turns(effects)).toEqual([]);
    expect(quiet(effects)).toEqual([{ avatarId: 'zed', rung: 'mention', reason: 'mention-cap' }]);
  });
});

describe('inside a thread', () => {
  it('the message that opens a thread is answered by BOT_MENTION_CASCADE_LIMIT of those it names, in the cascade lane', () => {
    const s = new FloorScene({ botCascadeLimit: 1 });
    const luna = onlyClaim(s.say(1_000, ANN, 'Luna, hi'));
    const effects = s.deliver(2_000, luna.turnId, 'Milo and Zed, what do you think?');
    expect(effects).toContainEqual(
      expect.objectContaining({ type: 'thread.opened', participants: ['luna', 'milo', 'zed'] }),
    );
    expect(claimsIn(effects).map((c) => `${c.avatarId}@${c.lane}`)).toEqual(['milo@cascade']);
    expect(quiet(effects)).toEqual([{ avatarId: 'zed', rung: 'thread', reason: 'mention-cap' }]);
    expect(s.floor.view().budget.cascade).toBe(0);
    // Zed speaks later, as a turn of the thread, which pays for it.
    const milo = onlyClaim(effects);
    const later = claimsIn(s.deliver(3_000, milo.turnId, 'Gears are fun.'));
    expect(later.map((c) => `${c.avatarId}@${c.rung}/${c.lane}`)).toEqual(['zed@thread/thread']);
  });

  it('with the default limit, everyone the opening message names answers it in the cascade lane', () => {
    const s = new FloorScene({});
    const luna = onlyClaim(s.say(1_000, ANN, 'Luna, hi'));
    const effects = s.deliver(2_000, luna.turnId, 'Milo and Zed, what do you think?');
    expect(claimsIn(effects).map((c) => `${c.avatarId}@${c.lane}`)).toEqual(['milo@cascade', 'zed@cascade']);
    expect(s.floor.view().budget.cascade).toBe(1);
  });

  it('inside a live thread, everyone an avatar names answers, up to the per-message limit, whatever the cascade limit', () => {
    const s = new FloorScene({ botCascadeLimit: 1 });
    const luna = onlyClaim(s.say(1_000, ANN, 'Luna, hi'));
    const milo = onlyClaim(s.deliver(2_000, luna.turnId, 'Milo and Zed, what do you think?'));
    const effects = s.deliver(3_000, milo.turnId, 'Luna and Zed, I like it.');
    expect(claimsIn(effects).map((c) => `${c.avatarId}@${c.lane}`)).toEqual(['luna@thread', 'zed@thread']);
  });

  it('the turn that fills the thread is told it is closing', () => {
    const s = new FloorScene({ botMentionThreadTurns: 2 });
    const luna = onlyClaim(s.say(1_000, ANN, 'Luna, hi'));
    const milo = onlyClaim(s.deliver(2_000, luna.turnId, 'Milo, what do you think?'));
    expect(milo).toMatchObject({
      lane: 'cascade',
      context: { threadTurn: 1, threadMaxTurns: 2, closing: false },
    });
    const back = onlyClaim(s.deliver(3_000, milo.turnId, 'Luna, I agree.'));
    expect(back).toMatchObject({
      avatarId: 'luna',
      lane: 'thread',
      context: { threadTurn: 2, closing: true },
    });
  });
});
