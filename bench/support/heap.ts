/**
 * Heap measurements. Every figure is a difference of V8's used heap after forced full collections
 * (`--expose-gc`), so it counts what stays reachable (the retained size), not what was allocated.
 */
import { getHeapStatistics } from 'node:v8';
import { createActor } from 'xstate';
import type { CoordinationConfig } from '../../src/config/coordinationConfig.js';
import type { FloorEffect, TurnClaim } from '../../src/floor/floorTypes.js';
import { avatarPresenceMachine } from '../../src/machines/avatarPresence.machine.js';
import { buildFloors, type FloorFactory, type FloorLike } from './driver.js';
import type { ChannelSpec } from './traffic.js';

const gc = (globalThis as { gc?: () => void }).gc;
export const canMeasureHeap = typeof gc === 'function';

/** Used heap after full collections, in bytes (NaN without --expose-gc). */
export function settledHeap(): number {
  if (!gc) return Number.NaN;
  for (let i = 0; i < 3; i++) gc();
  return getHeapStatistics().used_heap_size;
}

/** Keeps a value reachable up to this call (so a measurement cannot see it collected early). */
let _sink: unknown;
export const keep = (value: unknown) => {
  _sink = value;
  _sink = undefined;
};

export interface IdleHeap {
  /** Per floor with its roster but nobody present: maps, matcher, config references. */
  bytesPerEmptyFloor: number;
  /** Marginal cost of one idle presence: (floors with presences - floors without) / presences. */
  bytesPerIdlePresence: number;
  presences: number;
}

/**
 * Builds the floors twice, first with nobody present, then with every channel's avatars present
 * and idle, and returns the second set (the benchmark then runs traffic through it).
 */
export function measureIdle(
  factory: FloorFactory,
  channels: readonly ChannelSpec[],
  config: CoordinationConfig,
  startAt: number,
): { floors: FloorLike[]; heap: IdleHeap } {
  const base = settledHeap();
  let empty: FloorLike[] | undefined = buildFloors(factory, channels, config, startAt, false);
  const withoutPresences = settledHeap() - base;
  keep(empty);
  empty = undefined;
  const floors = buildFloors(factory, channels, config, startAt, true);
  const withPresences = settledHeap() - base;
  const presences = channels.reduce((n, c) => n + c.present.length, 0);
  return {
    floors,
    heap: {
      bytesPerEmptyFloor: withoutPresences / channels.length,
      bytesPerIdlePresence: (withPresences - withoutPresences) / presences,
      presences,
    },
  };
}

export interface ThreadHeap {
  threads: number;
  /** Retained bytes per open thread (snapshot or record, participants, reservations). */
  bytesPerOpenThread: number;
  /** What an ended thread leaves behind in the floor's bounded `endedThreads` map, per thread. */
  bytesPerEndedThreadResidue: number;
  /** False when the `endedThreads` field was not found (then the residue is not subtracted). */
  residueMeasured: boolean;
}

const claimsOf = (effects: FloorEffect[]): TurnClaim[] =>
  effects.flatMap((e) => (e.type === 'turn.claimed' ? [e.turn] : []));

/**
 * Opens `pairs` mention threads in each of a fresh set of floors, the way traffic opens them: a
 * human mentions avatar A; A's delivered answer mentions B (the floor opens a mention thread A–B
 * and gives B a thread turn); B's delivered answer addresses nobody (a turn in the thread, which
 * offers A the next one); that last claim is aborted, so nothing is in flight. Then:
 *   open     = heap with the threads open
 *   ended    = heap after a tick a day later (every thread expired; nothing else changes)
 *   cleared  = heap after emptying each floor's `endedThreads` map (bench-only introspection)
 * bytes per open thread = (open - cleared) / threads; residue per ended thread = (ended - cleared) / threads.
 */
export function measureThreads(
  factory: FloorFactory,
  channels: readonly ChannelSpec[],
  config: CoordinationConfig,
  startAt: number,
  pairs: number,
): ThreadHeap {
  let floors: FloorLike[] | undefined = buildFloors(factory, channels, config, startAt, true);
  let opened = 0;
  let ended = 0;
  const count = (effects: FloorEffect[]) => {
    for (const e of effects) {
      if (e.type === 'thread.opened') opened++;
      else if (e.type === 'thread.ended') ended++;
    }
    return effects;
  };
  channels.forEach((spec, c) => {
    const floor = (floors as FloorLike[])[c] as FloorLike;
    const human = { kind: 'human' as const, id: `u${c}.0`, name: 'alice' };
    for (let i = 0; i < pairs && 2 * i + 1 < spec.present.length; i++) {
      const a = spec.present[2 * i] as string;
      const b = spec.present[2 * i + 1] as string;
      const t = startAt + 1_000 + i * 1_000;
      const id = `${spec.channelId}:x${i}`;
      const asked = claimsOf(
        count(
          floor.handle({
            type: 'message',
            at: t,
            messageId: id,
            author: human,
            text: `<@${a}> hi`,
            mentions: [a],
          }),
        ),
      );
      const claimA = asked.find((cl) => cl.avatarId === a);
      if (!claimA) continue;
      const toB = claimsOf(
        count(
          floor.handle({
            type: 'turn.delivered',
            at: t + 100,
            turnId: claimA.turnId,
            messageId: `${id}a`,
            text: `<@${b}> over to you`,
            mentions: [b],
          }),
        ),
      );
      for (const claimB of toB) {
        const next = claimsOf(
          count(
            floor.handle({
              type: 'turn.delivered',
              at: t + 200,
              turnId: claimB.turnId,
              messageId: `${id}b`,
              text: 'Sure.',
            }),
          ),
        );
        for (const cl of next)
          count(
            floor.handle({ type: 'turn.aborted', at: t + 300, turnId: cl.turnId, reason: 'measurement' }),
          );
      }
    }
  });
  const threads = opened - ended;
  const open = settledHeap();
  for (const floor of floors) count(floor.handle({ type: 'tick', at: startAt + 86_400_000 }));
  const afterEnd = settledHeap();
  let residueMeasured = true;
  for (const floor of floors) {
    // The floor's state record is private; the measurement reaches in to empty the bounded map.
    const ended = (floor as unknown as { state?: { endedThreads?: Map<string, unknown> } }).state
      ?.endedThreads;
    if (ended instanceof Map) ended.clear();
    else residueMeasured = false;
  }
  const cleared = residueMeasured ? settledHeap() : afterEnd;
  keep(floors);
  floors = undefined;
  return {
    threads,
    bytesPerOpenThread: (open - cleared) / threads,
    bytesPerEndedThreadResidue: (afterEnd - cleared) / threads,
    residueMeasured,
  };
}

/** For reference: retained bytes per running XState actor of the presence machine (what invariant 8 avoids). */
export function measureRunningActors(config: CoordinationConfig, count: number): number {
  const settings = {
    perAvatarCooldownMs: config.perAvatarCooldownMs,
    recentSummonCooldownMs: config.recentSummonCooldownMs,
    stickyAffinityTtlMs: config.stickyAffinityTtlMs,
    attentionHalfLifeMs: config.attentionHalfLifeMs,
    summonConversationDurationMs: config.summonConversationDurationMs,
  };
  const base = settledHeap();
  let actors: { stop(): void }[] | undefined = [];
  for (let i = 0; i < count; i++) {
    actors.push(
      createActor(avatarPresenceMachine, {
        input: { channelId: `ch${i}`, avatarId: `av${i}`, settings, at: 0 },
      }).start(),
    );
  }
  const bytes = (settledHeap() - base) / count;
  for (const a of actors) a.stop();
  keep(actors);
  actors = undefined;
  return bytes;
}
