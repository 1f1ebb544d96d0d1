/**
 * Summoning and dismissing avatars: who the summon thread includes, a greeting held back while the
 * avatar is mid-answer, what a dismissal releases and what refusing one says; avatars joining one
 * channel's roster stay out of the others.
 */
import { describe, expect, it } from 'vitest';
import { defaultCoordinationConfig } from '../../src/config/coordinationConfig.js';
import { ChannelFloor } from '../../src/floor/channelFloor.js';
import { ANN, BOB, FloorScene, onlyClaim, SCENE_ROSTER, turns } from '../support/floorScene.js';
import { claimsIn, ofType } from '../support/floorTraffic.js';

describe('summoning an avatar', () => {
  it('already here: the summon thread holds it once, with everyone else present', () => {
    const s = new FloorScene();
    const effects = s.summon(1_000, 'luna', BOB, 'm-1');
    expect(ofType(effects, 'thread.opened')).toMatchObject([
      { mode: 'summon', participants: ['luna', 'milo', 'zed'] },
    ]);
    expect(onlyClaim(effects)).toMatchObject({
      kind: 'greeting',
      anchorMessageId: 'm-1',
      context: { alreadyPresent: true, addressedByName: 'Bob' },
    });
  });

  it('mid-answer while another avatar is greeting: it greets once its answer is delivered', () => {
    const s = new FloorScene({}, ['milo']);
    onlyClaim(s.summon(1_000, 'zed'));
    const answer = onlyClaim(s.say(1_100, ANN, 'Milo, hi'));
    expect(ofType(s.summon(1_200, 'milo', BOB), 'candidate.suppressed')).toMatchObject([
      { avatarId: 'milo', rung: 'greeting', reason: 'busy' },
    ]);
    const greetings = claimsIn(s.deliver(1_500, answer.turnId, 'Hi Ann')).filter(
      (c) => c.kind === 'greeting',
    );
    expect(greetings).toMatchObject([
      { avatarId: 'milo', reason: 'Milo was summoned by Bob (greeting once free)' },
    ]);
  });

  it('names its own anchor after the turns claimed so far when the summon has no message', () => {
    const s = new FloorScene({}, []);
    s.summon(1_000, 'luna');
    expect(onlyClaim(s.summon(1_100, 'milo')).anchorMessageId).toBe('ch:summon2');
  });
});

describe('dismissing an avatar', () => {
  it("releases that avatar's turn only, and gives its budget back", () => {
    const s = new FloorScene();
    expect(turns(s.say(1_000, ANN, 'Luna and Milo, hi'))).toEqual(['luna@mention', 'milo@mention']);
    expect(s.dismiss(1_500, 'luna')).toEqual([
      { type: 'turn.released', at: 1_500, turnId: 'ch:t1', avatarId: 'luna', reason: 'dismissed' },
      { type: 'presence.dismissed', at: 1_500, avatarId: 'luna' },
    ]);
    expect(s.floor.view().inFlight.map((c) => c.avatarId)).toEqual(['milo']);
    expect(s.floor.view().budget.main).toBe(2);
  });

  it('leaves the threads it was in, and only those', () => {
    const s = new FloorScene();
    const luna = onlyClaim(s.say(1_000, ANN, 'Luna, hi'));
    s.deliver(2_000, luna.turnId, 'Milo, what do you think?');
    expect(s.floor.view().threads.map((t) => t.participants)).toEqual([['luna', 'milo']]);
    s.dismiss(2_500, 'zed');
    expect(s.floor.view().threads.map((t) => t.state)).toEqual(['active']);
    expect(s.floor.view().threads[0]?.participants).toEqual(['luna', 'milo']);
  });

  it('refuses to dismiss an avatar that is not here, and says so', () => {
    const s = new FloorScene({}, ['milo']);
    expect(s.dismiss(1_000, 'luna')).toEqual([
      {
        type: 'event.rejected',
        at: 1_000,
        code: 'AVATAR_NOT_PRESENT',
        message: 'Cannot dismiss luna: it is not present in ch.',
      },
    ]);
  });
});

describe("one channel's roster", () => {
  it('an avatar joining one channel is unknown to another channel built from the same roster', () => {
    const options = { config: defaultCoordinationConfig, roster: SCENE_ROSTER, present: ['luna'] };
    const here = new ChannelFloor({ channelId: 'here', ...options });
    const there = new ChannelFloor({ channelId: 'there', ...options });
    here.handle({ type: 'avatar.join', at: 1_000, avatar: { id: 'kai', name: 'Kai' }, present: false });
    expect(claimsIn(here.handle({ type: 'summon', at: 2_000, avatarId: 'kai', by: ANN }))).toHaveLength(1);
    expect(there.handle({ type: 'summon', at: 2_000, avatarId: 'kai', by: ANN })).toEqual([
      {
        type: 'event.rejected',
        at: 2_000,
        code: 'AVATAR_UNKNOWN',
        message: 'Cannot summon kai: no avatar with that id is known in there.',
      },
    ]);
  });
});
