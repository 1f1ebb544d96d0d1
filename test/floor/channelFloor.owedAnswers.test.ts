/**
 * An avatar named by another while it is mid-turn owes an answer: it answers once free, in the
 * thread it was asked in, unless that thread has ended or filled up, or a person has spoken since.
 */
import { describe, expect, it } from 'vitest';
import type { FloorEffect } from '../../src/floor/floorTypes.js';
import { ANN, BOB, FloorScene, quiet, turns } from '../support/floorScene.js';
import { claimsIn } from '../support/floorTraffic.js';

/** Luna and Milo both answer Ann; Luna's answer names Milo, who is still mid-turn. */
function miloOwesLuna(config: ConstructorParameters<typeof FloorScene>[0] = {}): FloorScene {
  const s = new FloorScene(config);
  expect(turns(s.say(1_000, ANN, 'Luna and Milo, hi'))).toEqual(['luna@mention', 'milo@mention']);
  const named = s.deliver(2_000, 'ch:t1', 'Milo, what do you think?');
  expect(named).toContainEqual(expect.objectContaining({ type: 'thread.opened', threadId: 'ch:th1' }));
  expect(quiet(named)).toEqual([{ avatarId: 'milo', rung: 'thread', reason: 'busy' }]);
  return s;
}

const miloClaims = (effects: FloorEffect[]) => claimsIn(effects).filter((c) => c.avatarId === 'milo');

describe('an answer owed by an avatar that was busy', () => {
  it('is claimed in the thread it was asked in once the avatar is free', () => {
    const effects = miloOwesLuna().deliver(3_000, 'ch:t2', 'I am here');
    expect(miloClaims(effects)).toMatchObject([
      {
        rung: 'thread',
        // It answers the message that opened the thread: a cascade turn, the thread's too.
        lane: 'cascade',
        threadId: 'ch:th1',
        triggerMessageId: 'ch:t1/m',
        reason:
          'Milo is in mention thread ch:th1 (0 of 6 turns used) and did not speak last (answered once free)',
        context: {
          threadTurn: 2,
          threadMaxTurns: 6,
          addressedByName: 'Luna',
          triggerText: 'Milo, what do you think?',
        },
      },
    ]);
  });

  it('is dropped, with the reason, when the thread has no turn left for it by then', () => {
    const effects = miloOwesLuna({ botMentionThreadTurns: 1 }).deliver(3_000, 'ch:t2', 'I am here');
    expect(miloClaims(effects)).toEqual([]);
    expect(quiet(effects)).toContainEqual({ avatarId: 'milo', rung: 'thread', reason: 'thread-exhausted' });
  });

  it('is dropped when the thread expired before the avatar was free', () => {
    const effects = miloOwesLuna().deliver(200_000, 'ch:t2', 'I am here');
    expect(effects[0]).toMatchObject({ type: 'thread.ended', threadId: 'ch:th1', outcome: 'expired' });
    expect(miloClaims(effects)).toEqual([]);
    expect(quiet(effects)).toEqual([{ avatarId: 'milo', rung: 'thread', reason: 'thread-ended' }]);
  });

  it('is forgotten once a person speaks again: the newer message takes precedence', () => {
    const s = miloOwesLuna();
    expect(turns(s.say(2_500, BOB, 'Zed, hello'))).toEqual(['zed@mention']);
    const effects = s.deliver(3_000, 'ch:t2', 'I am here');
    expect(miloClaims(effects)).toEqual([]);
    expect(quiet(effects)).toEqual([]);
  });
});
