/**
 * Caps: avatar messages per channel per rolling hour (the floor's own count, every lane), and the
 * tokens and cost per day a spend gate reports. A capped avatar takes no turn, says why, tells a
 * person who called on it once per reset window, and nothing bursts out at the reset.
 */
import { describe, expect, it } from 'vitest';
import { defaultCoordinationConfig } from '../../src/config/coordinationConfig.js';
import type { CapBlock } from '../../src/floor/caps.js';
import { ChannelFloor } from '../../src/floor/channelFloor.js';
import type { FloorEffect } from '../../src/floor/floorTypes.js';
import { ANN, BOB, FloorScene, onlyClaim, quiet, SCENE_ROSTER, turns } from '../support/floorScene.js';

const HOUR = 3_600_000;
const notices = (effects: readonly FloorEffect[]) =>
  effects.flatMap((e) => (e.type === 'cap.notice' ? [`${e.avatarId}->${e.to.name}:${e.reason}`] : []));

describe('avatar messages per channel per hour', () => {
  const capped = { channelMaxAvatarMessagesPerHour: 2, botMentionCreateThread: false };

  it('counts every lane and stops at the cap, with the reason in words', () => {
    const s = new FloorScene(capped);
    const luna = onlyClaim(s.say(1_000, ANN, 'Luna, hi'));
    const zed = onlyClaim(s.deliver(2_000, luna.turnId, 'Zed, and you?')); // cascade lane
    s.deliver(3_000, zed.turnId, 'Hello.');
    const effects = s.say(4_000, BOB, 'Milo, are you there?');
    expect(turns(effects)).toEqual([]);
    expect(quiet(effects)).toEqual([
      {
        avatarId: 'milo',
        rung: 'mention',
        reason: 'cap-channel-hour',
        detail: '2 of 2 avatar messages in this channel within the hour',
      },
    ]);
    expect(notices(effects)).toEqual(['milo->Bob:cap-channel-hour']);
  });

  it('counts turns in flight, so answers claimed together cannot overshoot', () => {
    const s = new FloorScene({ ...capped, channelMaxAvatarMessagesPerHour: 1 });
    const effects = s.say(1_000, ANN, 'Luna and Milo, hi');
    expect(turns(effects)).toEqual(['luna@mention']);
    expect(quiet(effects)).toContainEqual(
      expect.objectContaining({ avatarId: 'milo', reason: 'cap-channel-hour' }),
    );
  });

  it('tells a person once per reset window, and nothing is said at the reset', () => {
    const s = new FloorScene({ ...capped, channelMaxAvatarMessagesPerHour: 1 });
    const luna = onlyClaim(s.say(1_000, ANN, 'Luna, hi'));
    s.deliver(2_000, luna.turnId, 'Hi Ann.');
    expect(notices(s.say(3_000, ANN, 'Milo?'))).toEqual(['milo->Ann:cap-channel-hour']);
    expect(notices(s.say(4_000, ANN, 'Milo, please?'))).toEqual([]);
    expect(notices(s.say(5_000, BOB, 'Milo!'))).toEqual(['milo->Bob:cap-channel-hour']);
    // The hour passes: nothing was queued, and the next mention is answered.
    expect(turns(s.tick(2_000 + HOUR))).toEqual([]);
    expect(turns(s.say(2_001 + HOUR, ANN, 'Milo, now?'))).toEqual(['milo@mention']);
  });

  it('says nothing when notices are silent', () => {
    const s = new FloorScene({ ...capped, channelMaxAvatarMessagesPerHour: 1, capNotice: 'silent' });
    const luna = onlyClaim(s.say(1_000, ANN, 'Luna, hi'));
    s.deliver(2_000, luna.turnId, 'Hi Ann.');
    const effects = s.say(3_000, ANN, 'Milo?');
    expect(notices(effects)).toEqual([]);
    expect(quiet(effects)[0]?.reason).toBe('cap-channel-hour');
  });

  it('holds a summon greeting too, and the count survives a restore', () => {
    const s = new FloorScene({ ...capped, channelMaxAvatarMessagesPerHour: 1 }, ['luna']);
    const luna = onlyClaim(s.say(1_000, ANN, 'Luna, hi'));
    s.deliver(2_000, luna.turnId, 'Hi Ann.');
    const snapshot = JSON.parse(JSON.stringify(s.floor.snapshot()));
    expect(snapshot.avatarMessages).toEqual([2_000]);
    const restored = ChannelFloor.restore(snapshot, {
      channelId: 'ch',
      config: { ...defaultCoordinationConfig, ...capped, channelMaxAvatarMessagesPerHour: 1 },
      roster: SCENE_ROSTER,
    });
    const effects = restored.handle({
      type: 'summon',
      at: 3_000,
      avatarId: 'milo',
      by: { id: ANN.id, name: ANN.name },
    });
    expect(effects.some((e) => e.type === 'turn.claimed')).toBe(false);
    expect(effects).toContainEqual(
      expect.objectContaining({ type: 'candidate.suppressed', rung: 'greeting', reason: 'cap-channel-hour' }),
    );
    expect(notices(effects)).toEqual(['milo->Ann:cap-channel-hour']);
  });

  it('stores nothing new for a floor without the cap', () => {
    const s = new FloorScene({ botMentionCreateThread: false });
    const luna = onlyClaim(s.say(1_000, ANN, 'Luna, hi'));
    s.deliver(2_000, luna.turnId, 'Hi Ann.');
    const snapshot = s.floor.snapshot();
    expect('avatarMessages' in snapshot).toBe(false);
    expect('capNotices' in snapshot).toBe(false);
  });
});

describe('a spend gate (tokens and cost per day)', () => {
  it('keeps a capped avatar quiet in every lane while others speak', () => {
    const blocked = new Set<string>();
    const gate = (avatarId: string, at: number): CapBlock | null =>
      blocked.has(avatarId)
        ? { reason: 'cap-avatar-tokens', detail: '50,000 of 50,000 tokens today', resetsAt: at + HOUR }
        : null;
    const floor = new ChannelFloor({
      channelId: 'ch',
      config: { ...defaultCoordinationConfig, botMentionCreateThread: false },
      roster: SCENE_ROSTER,
      present: ['luna', 'milo', 'zed'],
      spendGate: gate,
    });
    blocked.add('zed');
    const first = floor.handle({
      type: 'message',
      at: 1_000,
      messageId: 'h1',
      author: ANN,
      text: 'Luna and Zed, hi',
    });
    expect(first.flatMap((e) => (e.type === 'turn.claimed' ? [e.turn.avatarId] : []))).toEqual(['luna']);
    expect(notices(first)).toEqual(['zed->Ann:cap-avatar-tokens']);
    const luna = first.find((e) => e.type === 'turn.claimed');
    if (luna?.type !== 'turn.claimed') throw new Error('no claim');
    // An avatar naming the capped one gets no answer from it either (cascade lane), and no notice.
    const cascade = floor.handle({
      type: 'turn.delivered',
      at: 2_000,
      turnId: luna.turn.turnId,
      messageId: 'm1',
      text: 'Zed, your view?',
    });
    expect(cascade.some((e) => e.type === 'turn.claimed')).toBe(false);
    expect(notices(cascade)).toEqual([]);
    blocked.delete('zed');
    const again = floor.handle({ type: 'message', at: 3_000, messageId: 'h2', author: ANN, text: 'Zed?' });
    expect(again.flatMap((e) => (e.type === 'turn.claimed' ? [e.turn.avatarId] : []))).toEqual(['zed']);
  });
});
