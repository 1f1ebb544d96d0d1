/**
 * A thread's turns are reserved when claimed, so two avatars answering at once cannot overrun its
 * limit, and a failed turn gives its reservation back; the record is part of what a snapshot keeps.
 */
import { describe, expect, it } from 'vitest';
import { ANN, FloorScene, onlyClaim, turns } from '../support/floorScene.js';

describe('thread turn reservations', () => {
  it('counts each claimed turn once, and frees it again when the turn fails', () => {
    const s = new FloorScene();
    const luna = onlyClaim(s.say(1_000, ANN, 'Luna, hi'));
    const claimed = s.deliver(2_000, luna.turnId, 'Milo and Zed, what do you think?');
    expect(turns(claimed)).toEqual(['milo@thread', 'zed@thread']);
    expect(s.floor.snapshot().threadReservations).toEqual([['ch:th1', 2]]);
    s.fail(2_500, 'ch:t2');
    expect(s.floor.snapshot().threadReservations).toEqual([['ch:th1', 1]]);
    s.fail(2_600, 'ch:t3');
    expect(s.floor.snapshot().threadReservations).toEqual([]);
  });

  it('a failed turn outside any thread reserves and frees nothing', () => {
    const s = new FloorScene();
    s.fail(1_500, onlyClaim(s.say(1_000, ANN, 'Luna, hi')).turnId);
    expect(s.floor.snapshot().threadReservations).toEqual([]);
  });
});
