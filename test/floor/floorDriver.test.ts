/**
 * The floor driver: the one interpreter of a floor's effects (channel actor, simulator, benchmarks).
 * It hands turns to its owner, counts the turns each avatar spoke in each thread, and keeps one
 * tick armed at the floor's next deadline, on simulated time.
 */
import { describe, expect, it } from 'vitest';
import { SimulatedClock } from '../../src/actors/clock.js';
import { defaultCoordinationConfig } from '../../src/config/coordinationConfig.js';
import { ChannelFloor } from '../../src/floor/channelFloor.js';
import { type DrivenFloor, FloorDriver } from '../../src/floor/floorDriver.js';
import type { FloorEffect, FloorEvent, TurnClaim } from '../../src/floor/floorTypes.js';

const START = 1_000_000;
const ROSTER = [
  { id: 'luna', name: 'Luna' },
  { id: 'milo', name: 'Milo' },
];
const ANN = { kind: 'human' as const, id: 'u-ann', name: 'Ann' };

function room() {
  const clock = new SimulatedClock(START);
  const floor = new ChannelFloor({
    channelId: 'ch',
    config: { ...defaultCoordinationConfig, threadTtlMs: 60_000 },
    roster: ROSTER,
    present: ['luna', 'milo'],
    at: START,
  });
  const claims: TurnClaim[] = [];
  const released: string[] = [];
  const seen: FloorEffect['type'][] = [];
  const applied: FloorEvent['type'][] = [];
  const driver = new FloorDriver({
    floor,
    clock,
    hooks: {
      onEffect: (effect) => seen.push(effect.type),
      onClaim: (turn) => claims.push(turn),
      onRelease: (release) => released.push(release.turnId),
      onApplied: (event) => applied.push(event.type),
    },
  });
  return { clock, floor, driver, claims, released, seen, applied };
}

describe('FloorDriver', () => {
  it('hands claimed and released turns to its owner, after reporting every effect', () => {
    const r = room();
    r.driver.apply({ type: 'message', at: START, messageId: 'h1', author: ANN, text: 'Luna, hi' });
    expect(r.claims.map((c) => c.avatarId)).toEqual(['luna']);
    expect(r.seen).toContain('turn.claimed');
    r.driver.apply({ type: 'dismiss', at: START + 10, avatarId: 'luna' });
    expect(r.released).toEqual([r.claims[0]?.turnId]);
    expect(r.applied).toEqual(['message', 'dismiss']);
  });

  it("counts a thread's opener as having spoken in it, and every delivered turn in it", () => {
    const r = room();
    // Luna's own message names Milo: it opens a mention thread Luna has spoken in once.
    r.driver.apply({ type: 'message', at: START, messageId: 'h1', author: ANN, text: 'hello all' });
    r.driver.apply({
      type: 'message',
      at: START + 10,
      messageId: 'a1',
      author: { kind: 'avatar', id: 'luna' },
      text: 'Milo, what do you think?',
    });
    const thread = r.floor.view().threads[0];
    expect(thread).toBeDefined();
    const threadId = thread?.id ?? '';
    expect(r.driver.spokenInThread(threadId, 'luna')).toBe(1);
    expect(r.driver.spokenInThread(threadId, 'milo')).toBe(0);
    const milo = r.claims.find((c) => c.avatarId === 'milo' && c.threadId === threadId);
    expect(milo).toBeDefined();
    r.driver.apply({
      type: 'turn.delivered',
      at: START + 20,
      turnId: milo?.turnId ?? '',
      messageId: 'a2',
      text: 'Luna, I agree.',
    });
    expect(r.driver.spokenInThread(threadId, 'milo')).toBe(1);
    expect(r.driver.spokenCounts()).toContainEqual([threadId, 'luna', 1]);
  });

  it('the avatar whose delivered turn opens a thread is its opener, and a restored count carries on', () => {
    const r = room();
    r.driver.apply({ type: 'message', at: START, messageId: 'h1', author: ANN, text: 'Luna, hi' });
    const luna = r.claims[0] as TurnClaim;
    r.driver.apply({
      type: 'turn.delivered',
      at: START + 10,
      turnId: luna.turnId,
      messageId: 'a1',
      text: 'Hi Ann! Milo, say hello.',
    });
    const threadId = r.floor.view().threads[0]?.id ?? '';
    expect(r.driver.spokenInThread(threadId, 'luna')).toBe(1);
    const again = new FloorDriver({ floor: r.floor, clock: r.clock, spoken: r.driver.spokenCounts() });
    expect(again.spokenInThread(threadId, 'luna')).toBe(1);
  });

  it("keeps one tick armed at the floor's next deadline, and ends a thread on time", () => {
    const r = room();
    r.driver.apply({ type: 'message', at: START, messageId: 'h1', author: ANN, text: 'hello' });
    r.driver.apply({
      type: 'message',
      at: START + 10,
      messageId: 'a1',
      author: { kind: 'avatar', id: 'luna' },
      text: 'Milo, shall we?',
    });
    const deadline = r.floor.nextDeadline();
    expect(deadline).toBeDefined();
    expect(r.clock.pending).toBe(1);
    expect(r.clock.nextDue()).toBe(deadline);
    r.clock.advanceSync(60 * 60_000);
    expect(r.applied.at(-1)).toBe('tick');
    expect(r.seen).toContain('thread.ended');
    expect(r.floor.view().threads).toEqual([]);
    expect(r.clock.pending).toBe(0);
  });

  it('moves its tick on, once, when a floor leaves its deadline where it was', () => {
    const clock = new SimulatedClock(START);
    let ticks = 0;
    const stuck: DrivenFloor = {
      handle: (event) => {
        if (event.type === 'tick') ticks++;
        return [];
      },
      nextDeadline: () => START + 100,
    };
    const reports: number[] = [];
    const driver = new FloorDriver({
      floor: stuck,
      clock,
      hooks: { onStuckDeadline: (at) => reports.push(at) },
    });
    driver.armTick();
    clock.advanceSync(100);
    expect(ticks).toBe(3);
    expect(reports).toEqual([START + 100]);
    expect(clock.nextDue()).toBe(START + 101);
    // Past due now, the deadline still does not move: the driver keeps stepping, never spinning.
    clock.advanceSync(10);
    expect(ticks).toBe(3 + 3 * 10);
    expect(reports).toEqual(Array.from({ length: 11 }, (_, i) => START + 100 + i));
  });

  it('arms nothing once stopped', () => {
    const r = room();
    r.driver.apply({ type: 'message', at: START, messageId: 'h1', author: ANN, text: 'hello' });
    r.driver.apply({
      type: 'message',
      at: START + 10,
      messageId: 'a1',
      author: { kind: 'avatar', id: 'luna' },
      text: 'Milo, shall we?',
    });
    expect(r.clock.pending).toBe(1);
    r.driver.stop();
    expect(r.clock.pending).toBe(0);
    r.driver.apply({ type: 'message', at: START + 20, messageId: 'h2', author: ANN, text: 'anyone?' });
    expect(r.clock.pending).toBe(0);
  });
});
