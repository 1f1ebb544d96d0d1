/**
 * Snapshots of the channel floor: a floor restored from its JSON snapshot decides exactly like the
 * floor it was taken from, on random traffic, with both engines; bad snapshots are refused with a
 * code.
 */
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { defaultCoordinationConfig } from '../../src/config/coordinationConfig.js';
import { ChannelFloor, type ChannelFloorOptions } from '../../src/floor/channelFloor.js';
import type { FloorEngineName } from '../../src/floor/floorEngine.js';
import type { FloorEffect, FloorEvent } from '../../src/floor/floorTypes.js';
import { FloorDriver, trafficArb, trafficRoster } from '../support/floorTraffic.js';

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

  it('stores no id, channel or setting the restore gives back, nor a presence at its starting values', () => {
    const floor = new ChannelFloor({ ...base, present: ['luna'], at: 1000, epoch: 'e1' });
    expect(floor.snapshot().presences).toEqual([
      ['luna', { now: 1000, attention: { value: 0.25, at: 1000 } }],
    ]);
    floor.handle({
      type: 'summon',
      at: 2000,
      avatarId: 'rex',
      by: { id: 'u1', name: 'Sam' },
      messageId: 's1',
    });
    const snap = floor.snapshot();
    const [[, rex] = []] = snap.presences.filter(([id]) => id === 'rex');
    expect(rex).toMatchObject({
      state: { present: { mode: 'conversing', turn: 'claimed' } },
      summonTurns: defaultCoordinationConfig.summonInitialTurns,
    });
    const json = JSON.stringify(snap);
    expect(json).not.toContain('"settings"');
    expect(json.match(/"channelId"/g)).toHaveLength(1);
    for (const [, p] of snap.presences) expect(p).not.toHaveProperty('avatarId');
    for (const [, t] of snap.threads) expect(t).not.toHaveProperty('id');
    expect(snap.inFlight[0]).not.toHaveProperty('channelId');
    const restored = ChannelFloor.restore(JSON.parse(JSON.stringify(snap)), base);
    expect(restored.view()).toEqual(floor.view());
    expect(restored.view().inFlight[0]?.channelId).toBe('general');
  });

  it('gives restored presences the timing settings of the configuration they are restored with', () => {
    const asked = (config: typeof defaultCoordinationConfig) => {
      const floor = new ChannelFloor({ ...base, config, present: ['luna'], at: 0 });
      const claimed = floor.handle({
        type: 'message',
        at: 1000,
        messageId: 'h1',
        author: { kind: 'human', id: 'u1', name: 'Ann' },
        text: 'Luna, are you there?',
      });
      const turn = claimed.find((e) => e.type === 'turn.claimed');
      return {
        snapshot: JSON.parse(JSON.stringify(floor.snapshot())),
        turnId: turn?.type === 'turn.claimed' ? turn.turn.turnId : '',
      };
    };
    const { snapshot, turnId } = asked({ ...defaultCoordinationConfig, perAvatarCooldownMs: 5_000 });
    const later = { ...defaultCoordinationConfig, perAvatarCooldownMs: 77_000 };
    const restored = ChannelFloor.restore(snapshot, { ...base, config: later });
    restored.handle({ type: 'turn.delivered', at: 3000, turnId, messageId: 'l1', text: 'Here.' });
    expect(restored.view().present.find((p) => p.id === 'luna')?.cooldownUntil).toBe(80_000);

    // A version-1 document stored its presences' settings (Luna's cooldown 109,524 ms); they are
    // not used: the configuration's are (the default 120,000 ms).
    const v1 = fixture('channelFloor.v1.json') as {
      presences: [string, { context: { settings: object } }][];
    };
    expect(v1.presences[0]?.[1].context.settings).toMatchObject({ perAvatarCooldownMs: 109_524 });
    const options = { channelId: 'ch', config: defaultCoordinationConfig, roster: [...trafficRoster] };
    const fromV1 = ChannelFloor.restore(v1, options);
    fromV1.handle({ type: 'turn.delivered', at: 60_000, turnId: 'ch:t6', messageId: 'l1', text: 'Here.' });
    expect(fromV1.view().present.find((p) => p.id === 'luna')?.cooldownUntil).toBe(180_000);
  });

  it('migrates a version-1 document: the same floor, stored again as version 2', () => {
    const options = { channelId: 'ch', config: defaultCoordinationConfig, roster: [...trafficRoster] };
    const v1 = fixture('channelFloor.v1.json') as Record<string, unknown>;
    const floor = ChannelFloor.restore(v1, options);
    const again = floor.snapshot();
    expect(again.version).toBe(2);
    // Threads stored before `extensionMs` and `sentiment` existed extend by their TTL and have no mood yet.
    const stripped = structuredClone(v1) as { threads: [string, { context: Record<string, unknown> }][] };
    for (const [, t] of stripped.threads) {
      delete t.context.extensionMs;
      delete t.context.sentiment;
    }
    const old = ChannelFloor.restore(stripped, options).snapshot();
    for (const [i, [, t]] of old.threads.entries()) {
      expect(t.extensionMs).toBe(t.ttlMs);
      expect(t.sentiment).toEqual({ sum: 0, turns: 0 });
      expect(again.threads[i]?.[1]).toMatchObject({
        ...t,
        extensionMs: expect.any(Number),
        sentiment: expect.any(Object),
      });
    }
    expect(ChannelFloor.restore(JSON.parse(JSON.stringify(again)), options).view()).toEqual(floor.view());
    expect(() =>
      ChannelFloor.restore({ ...v1, presences: [['luna', { value: 'x', context: {} }]] }, options),
    ).toThrow(/presences\.0\.1\.context\.channelId/);
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
  // follow-up); and an ended thread no pending turn can name any more is forgotten (th1). The
  // floor it ends with is written as a version-2 document (`after`), as every floor now is.
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
