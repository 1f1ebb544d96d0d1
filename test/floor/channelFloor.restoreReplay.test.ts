/**
 * What a floor keeps across a restart, checked on fixed samples of random channel traffic: a
 * floor restored from its JSON after every event decides and looks like one that never stopped,
 * and an avatar removed from the roster leaves nothing owed behind. Few samples: the mutation run
 * replays them for nearly every mutant (floorSnapshot.test.ts covers random traffic at length).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { defaultCoordinationConfig } from '../../src/config/coordinationConfig.js';
import { ChannelFloor, type ChannelFloorOptions } from '../../src/floor/channelFloor.js';
import type { FloorEffect, FloorEvent } from '../../src/floor/floorTypes.js';
import { FloorDriver, ofType, type Traffic, trafficArb, trafficRoster } from '../support/floorTraffic.js';

/** Fixed traffic: the same samples on every run, so a failure replays. */
const SAMPLES: Traffic[] = fc.sample(trafficArb({ maxSteps: 30 }), { seed: 20261127, numRuns: 5 });

/** A floor thrown away after every event and restored from the JSON of its snapshot. */
function restoredEachEvent(views: unknown[]) {
  return (options: ChannelFloorOptions): ChannelFloor => {
    let inner = new ChannelFloor(options);
    const { present: _p, at: _a, ...restoreOptions } = options;
    const shell = {
      handle(event: FloorEvent): FloorEffect[] {
        const effects = inner.handle(event);
        const before = inner.view();
        inner = ChannelFloor.restore(JSON.parse(JSON.stringify(inner.snapshot())), restoreOptions);
        views.push([before, inner.view()]);
        return effects;
      },
      nextDeadline: () => inner.nextDeadline(),
      view: () => inner.view(),
      snapshot: () => inner.snapshot(),
    };
    return shell as unknown as ChannelFloor;
  };
}

describe('a floor restored from its snapshot', () => {
  it('decides, schedules and looks exactly like the floor that never stopped', () => {
    for (const traffic of SAMPLES) {
      const plain = new FloorDriver(traffic).finish();
      const views: unknown[] = [];
      const restored = new FloorDriver(traffic, undefined, 'compiled', restoredEachEvent(views)).finish();
      expect(restored.effects).toEqual(plain.effects);
      for (const [before, after] of views as [unknown, unknown][]) expect(after).toEqual(before);
    }
  });

  it('with an avatar gone from the roster, keeps nothing it owed: no presence, turn, greeting or goodbye', () => {
    const [gone, ...kept] = trafficRoster;
    let checked = 0;
    for (const traffic of SAMPLES) {
      const driver = new FloorDriver(traffic, (_entry, floor) => {
        const snapshot = JSON.parse(JSON.stringify(floor.snapshot()));
        const restored = ChannelFloor.restore(snapshot, {
          channelId: snapshot.channelId,
          config: traffic.world.config,
          roster: kept,
        }).snapshot();
        const id = gone?.id;
        expect(restored.presences.map(([p]) => p)).not.toContain(id);
        expect(restored.inFlight.map((c) => c.avatarId)).not.toContain(id);
        expect(restored.followUps.map((f) => f.avatarId)).not.toContain(id);
        expect(restored.deferred.map(([d]) => d)).not.toContain(id);
        expect(restored.pendingGreetings.map(([g]) => g)).not.toContain(id);
        expect(restored.departed.map(([d]) => d)).not.toContain(id);
        expect(restored.arrivals.map(([a]) => a)).not.toContain(id);
        // Everyone else's share is kept as it was.
        const others = (list: [string, unknown][]) => list.filter(([k]) => k !== id);
        expect(others(restored.departed)).toEqual(others(snapshot.departed));
        expect(others(restored.arrivals)).toEqual(others(snapshot.arrivals));
        expect(others(restored.deferred)).toEqual(others(snapshot.deferred));
        expect(others(restored.pendingGreetings)).toEqual(others(snapshot.pendingGreetings));
        expect(restored.threadBackoff).toEqual(snapshot.threadBackoff);
        expect(restored.budget).toEqual(snapshot.budget);
        checked += 1;
      });
      driver.finish();
    }
    expect(checked).toBeGreaterThan(25);
  });
});

describe('what the floor says about events it cannot or did not act on', () => {
  const roster = [
    { id: 'luna', name: 'Luna' },
    { id: 'zed', name: 'Zed' },
  ];
  const floorOf = () =>
    new ChannelFloor({ channelId: 'ch', config: defaultCoordinationConfig, roster, present: ['luna'] });

  it('a message from an avatar that is not here is refused, and the refusal says to summon it', () => {
    const floor = floorOf();
    const effects = floor.handle({
      type: 'message',
      at: 1_000,
      messageId: 'z1',
      author: { kind: 'avatar', id: 'zed' },
      text: 'hello',
    });
    expect(effects).toContainEqual({
      type: 'event.rejected',
      at: 1_000,
      code: 'AVATAR_NOT_PRESENT',
      message: 'Avatar zed is not present in ch; summon it first.',
    });
  });

  it('an avatar joining comes in unless it is told to stay out', () => {
    const floor = floorOf();
    floor.handle({ type: 'avatar.join', at: 1_000, avatar: { id: 'kai', name: 'Kai' }, present: false });
    floor.handle({ type: 'avatar.join', at: 1_000, avatar: { id: 'pia', name: 'Pia' } });
    expect(floor.view().present.map((p) => p.id)).toEqual(['luna', 'pia']);
  });

  it('a failed and an aborted turn are released with the reason and which of the two it was', () => {
    for (const type of ['turn.failed', 'turn.aborted'] as const) {
      const floor = floorOf();
      const claimed = floor.handle({
        type: 'message',
        at: 1_000,
        messageId: 'h1',
        author: { kind: 'human', id: 'u1', name: 'Ann' },
        text: 'Luna, are you there?',
      });
      const turn = ofType(claimed, 'turn.claimed')[0]?.turn;
      expect(turn?.avatarId).toBe('luna');
      const released = floor.handle({ type, at: 2_000, turnId: turn?.turnId ?? '', reason: 'model down' });
      const word = type === 'turn.failed' ? 'failed' : 'aborted';
      expect(ofType(released, 'turn.released')).toMatchObject([{ reason: `${word}: model down` }]);
    }
  });
});
