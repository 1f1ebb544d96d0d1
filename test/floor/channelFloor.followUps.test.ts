/**
 * A summoned avatar greets, follows up once a few seconds after its greeting, and follows up a
 * second time only if a person reacted to it meanwhile; follow-ups wait while the avatar is busy,
 * and the floor's next deadline is the earliest one due.
 */
import { describe, expect, it } from 'vitest';
import { BOB, CY, FloorScene, onlyClaim, turns } from '../support/floorScene.js';

describe('follow-ups after a summon', () => {
  it('follows up after the greeting, then answers once more whoever reacted, earliest due first', () => {
    const s = new FloorScene({}, []);
    const greeting = onlyClaim(s.summon(1_000, 'luna'));
    expect(greeting).toMatchObject({
      kind: 'greeting',
      anchorMessageId: 'ch:summon1',
      reason: 'Luna was summoned by Ann',
    });
    expect(greeting.context).toMatchObject({ maxChars: 150, addressedByName: 'Ann' });
    s.deliver(2_000, greeting.turnId, 'Hello!');
    expect(s.floor.nextDeadline()).toBe(5_000);

    const welcome = onlyClaim(s.say(2_500, BOB, 'Luna, welcome!'));
    expect(welcome.context.maxChars).toBeUndefined();
    s.deliver(2_600, welcome.turnId, 'Thanks!');
    expect(turns(s.tick(4_999))).toEqual([]);
    const first = onlyClaim(s.tick(5_000));
    expect(first).toMatchObject({
      kind: 'follow-up',
      rung: 'follow-up',
      lane: 'scheduled',
      anchorMessageId: 'ch:summon1',
      reason: 'Luna follows up on arriving, summoned by Ann',
    });
    s.deliver(5_500, first.turnId, 'So, what are we talking about?');
    expect(s.floor.view().pendingFollowUps).toEqual([{ avatarId: 'luna', dueAt: 13_500 }]);

    // Zed arrives meanwhile: its follow-up falls due before Luna's second one.
    s.deliver(6_500, onlyClaim(s.summon(6_000, 'zed', CY)).turnId, 'Hi both.');
    expect(s.floor.nextDeadline()).toBe(9_500);
    const zeds = onlyClaim(s.tick(9_500));
    expect(zeds).toMatchObject({ avatarId: 'zed', reason: 'Zed follows up on arriving, summoned by Cy' });
    expect(s.floor.nextDeadline()).toBe(13_500);
    const second = onlyClaim(s.tick(13_500));
    expect(second).toMatchObject({
      avatarId: 'luna',
      kind: 'follow-up',
      reason: 'Luna follows up once more, answering Bob, who reacted since it arrived',
      threadId: zeds.threadId,
      context: { addressedByName: 'Bob', addressedById: 'u-bob' },
    });
    s.deliver(14_000, second.turnId, 'Bob, good to meet you.');
    expect(s.floor.view().pendingFollowUps.filter((f) => f.avatarId === 'luna')).toEqual([]);
  });

  it('without anyone reacting, there is no second follow-up', () => {
    const s = new FloorScene({}, []);
    s.deliver(2_000, onlyClaim(s.summon(1_000, 'luna')).turnId, 'Hello!');
    s.deliver(5_500, onlyClaim(s.tick(5_000)).turnId, 'Anyone around?');
    const due = s.floor.nextDeadline();
    expect(due).toBe(13_500);
    expect(turns(s.tick(13_500))).toEqual([]);
    expect(s.floor.nextDeadline()).toBeUndefined();
  });

  it('waits while the avatar is answering someone, and follows up as soon as it is free', () => {
    const s = new FloorScene({}, []);
    s.deliver(2_000, onlyClaim(s.summon(1_000, 'luna')).turnId, 'Hello!');
    const answer = onlyClaim(s.say(4_000, BOB, 'Luna, how are you?'));
    expect(s.floor.nextDeadline()).toBeUndefined();
    expect(turns(s.tick(5_000))).toEqual([]);
    expect(turns(s.deliver(6_000, answer.turnId, 'Fine!'))).toEqual(['luna@follow-up']);
  });

  it('a second follow-up is not owed when the delay for it is zero', () => {
    const s = new FloorScene({ summonSecondFollowUpMs: 0 }, []);
    s.deliver(2_000, onlyClaim(s.summon(1_000, 'luna')).turnId, 'Hello!');
    s.deliver(2_600, onlyClaim(s.say(2_500, BOB, 'Luna, welcome!')).turnId, 'Thanks!');
    s.deliver(5_500, onlyClaim(s.tick(5_000)).turnId, 'Anyone around?');
    expect(s.floor.view().pendingFollowUps).toEqual([]);
    expect(s.floor.snapshot().arrivals).toEqual([]);
  });
});
