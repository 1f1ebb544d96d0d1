/**
 * Snapshots of the channel floor: a floor restored from its JSON snapshot decides exactly like the
 * floor it was taken from, on random traffic, with both engines; bad snapshots are refused with a
 * code.
 */
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { defaultCoordinationConfig } from '../src/config/coordinationConfig.js';
import { ChannelFloor, type ChannelFloorOptions } from '../src/machines/channelFloor.js';
import type { FloorEngineName } from '../src/machines/floorEngine.js';
import type { FloorEffect, FloorEvent } from '../src/machines/floorTypes.js';
import { FloorDriver, trafficArb, trafficRoster } from './support/floorTraffic.js';

const fixture = (name: string): unknown => JSON.parse(readFileSync(`test/fixtures/${name}`, 'utf8'));

/**
 * A floor that, after every event, is thrown away and restored from the JSON of its snapshot:
 * the harshest restart schedule there is.
 */
function alwaysRestoredFloor(options: ChannelFloorOptions): ChannelFloor {
  let inner = new ChannelFloor(options);
  const { present: _p, at: _a, ...restoreOptions } = options;
  const shell = {
    handle(event: FloorEvent): FloorEffect[] {
      const effects = inner.handle(event);
      inner = ChannelFloor.restore(JSON.parse(JSON.stringify(inner.snapshot())), restoreOptions);
      return effects;
    },
    nextDeadline: () => inner.nextDeadline(),
    view: () => inner.view(),
    snapshot: () => inner.snapshot(),
  };
  return shell as unknown as ChannelFloor;
}

describe('floor snapshots', () => {
  for (const engine of ['compiled', 'xstate'] as FloorEngineName[]) {
    it(`a floor restored after every event decides like one that never stopped (${engine})`, () => {
      fc.assert(
        fc.property(trafficArb({ maxSteps: 30 }), (traffic) => {
          const plain = new FloorDriver(traffic, undefined, engine).finish();
          const restored = new FloorDriver(traffic, undefined, engine, alwaysRestoredFloor).finish();
          expect(restored.effects).toEqual(plain.effects);
        }),
        { numRuns: engine === 'compiled' ? 80 : 25 },
      );
    });
  }

  const base = {
    channelId: 'general',
    config: defaultCoordinationConfig,
    roster: [
      { id: 'luna', name: 'Luna' },
      { id: 'rex', name: 'Rex' },
    ],
  };

  it('round-trips through JSON unchanged', () => {
    const floor = new ChannelFloor({ ...base, present: ['luna'], at: 1000, epoch: 'e1' });
    floor.handle({
      type: 'summon',
      at: 2000,
      avatarId: 'rex',
      by: { id: 'u1', name: 'Sam' },
      messageId: 's1',
    });
    const snap = floor.snapshot();
    const again = ChannelFloor.restore(JSON.parse(JSON.stringify(snap)), base).snapshot();
    expect(again).toEqual(snap);
    expect(again.epoch).toBe('e1');
    expect(again.inFlight).toHaveLength(1); // Rex's greeting is in flight
  });

  it('ends a thread whose deadline passed while stopped, at its deadline', () => {
    const floor = new ChannelFloor({ ...base, present: ['luna'], at: 0 });
    floor.handle({ type: 'summon', at: 0, avatarId: 'rex', by: { id: 'u1', name: 'Sam' } });
    const thread = floor.view().threads[0];
    expect(thread).toBeDefined();
    const restored = ChannelFloor.restore(floor.snapshot(), base);
    const effects = restored.handle({ type: 'tick', at: (thread?.expiresAt ?? 0) + 3_600_000 });
    const ended = effects.find((e) => e.type === 'thread.ended');
    expect(ended).toMatchObject({ at: thread?.expiresAt });
  });

  it('refuses a foreign document, a newer version and damaged data with TROUPE_SNAPSHOT_INVALID', () => {
    const snap = new ChannelFloor({ ...base, present: ['luna'] }).snapshot();
    const attempts: unknown[] = [
      { hello: 'world' },
      null,
      { ...snap, version: 99 },
      { ...snap, presences: [['luna', { value: 'nonsense-state', context: {} }]] },
      { ...snap, turnSeq: -1 },
      { ...snap, channelId: 'elsewhere' },
    ];
    for (const attempt of attempts) {
      expect(() => ChannelFloor.restore(attempt, base)).toThrow(
        expect.objectContaining({ code: 'TROUPE_SNAPSHOT_INVALID' }),
      );
    }
  });

  it('drops avatars that are no longer defined, with their turns', () => {
    const floor = new ChannelFloor({ ...base, present: ['luna'] });
    floor.handle({ type: 'summon', at: 0, avatarId: 'rex', by: { id: 'u1', name: 'Sam' } });
    const restored = ChannelFloor.restore(floor.snapshot(), {
      ...base,
      roster: [{ id: 'luna', name: 'Luna' }],
    });
    expect(restored.view().present.map((p) => p.id)).toEqual(['luna']);
    expect(restored.view().inFlight).toEqual([]);
  });

  // A document written by the v1 code, kept as it was stored: a channel stored before an upgrade
  // must come back deciding as it would have. The expected effects were recorded by that code and
  // changed only where a rule changed on purpose: a turn delivered after its thread ended (d2)
  // draws no candidates any more, so Luna is no longer reported busy for it; the stored floor now
  // also keeps each pair's thread backoff; and every turn Zoë delivers while her summon
  // conversation is live spends a guaranteed turn (3 left becomes 2), which turn.consumed reports
  // (summonTurnsLeft); and the summon in the replay leaves its arrival stored (for a second
  // follow-up); and an ended thread no pending turn can name any more is forgotten (th1).
  for (const engine of ['compiled', 'xstate'] as FloorEngineName[]) {
    it(`restores a stored v1 document and decides as the code that wrote it did (${engine})`, () => {
      const stored = fixture('channelFloor.v1.json');
      const replay = fixture('channelFloor.v1.replay.json') as {
        events: FloorEvent[];
        effects: FloorEffect[][];
        after: unknown;
      };
      const options = {
        channelId: 'ch',
        config: defaultCoordinationConfig,
        roster: [...trafficRoster],
        engine,
      };
      const floor = ChannelFloor.restore(stored, options);
      expect(floor.view().inFlight.map((c) => c.turnId)).toEqual(['ch:t1', 'ch:t5', 'ch:t6']);
      expect(replay.events.map((e) => floor.handle(e))).toEqual(replay.effects);
      expect(floor.snapshot()).toEqual(replay.after);
    });
  }
});
