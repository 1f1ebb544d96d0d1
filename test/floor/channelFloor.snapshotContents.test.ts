/**
 * What a floor's snapshot holds: goodbyes, arrivals, ended threads and the backoff between pairs
 * (empty lists until there are some), and a restored floor holds the same, minus whatever belonged
 * to an avatar no longer in the roster.
 */
import { describe, expect, it } from 'vitest';
import { defaultCoordinationConfig } from '../../src/config/coordinationConfig.js';
import { ChannelFloor } from '../../src/floor/channelFloor.js';
import { ANN, FloorScene, onlyClaim, SCENE_ROSTER } from '../support/floorScene.js';

/** Luna and Milo end a one-turn thread; Zed is summoned and says goodbye in its greeting. */
function eventfulFloor(): FloorScene {
  const s = new FloorScene({ botMentionThreadTurns: 1 }, ['luna', 'milo']);
  const milo = onlyClaim(
    s.deliver(2_000, onlyClaim(s.say(1_000, ANN, 'Luna, hi')).turnId, 'Milo, thoughts?'),
  );
  s.deliver(3_000, milo.turnId, 'Luna, fine');
  s.deliver(4_500, onlyClaim(s.summon(4_000, 'zed')).turnId, 'Hello, goodbye for now');
  return s;
}

describe('a floor snapshot', () => {
  it('of a fresh floor carries no goodbyes, arrivals, backoff or ended threads', () => {
    const snapshot = new FloorScene().floor.snapshot();
    expect(snapshot).toMatchObject({ departed: [], arrivals: [], threadBackoff: [], endedThreads: [] });
  });

  it('records who said goodbye, who arrived, which threads ended how, and which pairs back off', () => {
    const snapshot = eventfulFloor().floor.snapshot();
    expect(snapshot).toMatchObject({
      endedThreads: [['ch:th1', 'exhausted']],
      departed: [['zed', 4_500]],
      arrivals: [['zed', { at: 4_000 }]],
      threadBackoff: [['luna\u0000milo', { endedAt: 3_000, level: 0, until: 13_000 }]],
      followUps: [{ avatarId: 'zed', dueAt: 7_500, anchorMessageId: 'ch:summon3', summonerName: 'Ann' }],
      budget: { anchorMessageId: 'ch:summon3', main: 3, cascade: 3 },
    });
  });

  it('restores to a floor whose snapshot is the same', () => {
    const snapshot = JSON.parse(JSON.stringify(eventfulFloor().floor.snapshot()));
    const restored = ChannelFloor.restore(snapshot, {
      channelId: 'ch',
      config: { ...defaultCoordinationConfig, botMentionThreadTurns: 1 },
      roster: SCENE_ROSTER,
    });
    expect(JSON.parse(JSON.stringify(restored.snapshot()))).toEqual(snapshot);
  });

  it('restored without an avatar in the roster, keeps no follow-up, goodbye or arrival of it', () => {
    const snapshot = JSON.parse(JSON.stringify(eventfulFloor().floor.snapshot()));
    const restored = ChannelFloor.restore(snapshot, {
      channelId: 'ch',
      config: defaultCoordinationConfig,
      roster: SCENE_ROSTER.filter((a) => a.id !== 'zed'),
    }).snapshot();
    expect(restored.followUps).toEqual([]);
    expect(restored.departed).toEqual([]);
    expect(restored.arrivals).toEqual([]);
    expect(restored.threadBackoff).toEqual(snapshot.threadBackoff);
    expect(restored.endedThreads).toEqual([['ch:th1', 'exhausted']]);
  });
});
