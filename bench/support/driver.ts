/**
 * Drives many channel floors through pre-generated traffic in simulated time and times every floor
 * call. Each floor runs under the {@link FloorDriver} the channel actor uses, on a simulated clock
 * of its own; the benchmark plays the rest of the runtime: it delivers every claimed turn
 * (turn.generated, then turn.delivered with a scripted text, or turn.failed) after a simulated
 * latency, and the driver's tick fires at the floor's `nextDeadline()` as time passes.
 *
 * Channels are interleaved round-robin (channel 0's k-th inbound item, channel 1's, ..., then the
 * k+1-th), so consecutive calls touch different floors, as a busy process would. Everything the
 * driver does between floor calls (scheduling, scripting replies, bookkeeping) is outside the timed
 * windows.
 */

import { SimulatedClock } from '../../src/actors/clock.js';
import type { CoordinationConfig } from '../../src/config/coordinationConfig.js';
import type { ChannelFloorOptions } from '../../src/floor/channelFloor.js';
import { type DrivenFloor, FloorDriver } from '../../src/floor/floorDriver.js';
import type { AvatarProfile, FloorEffect, FloorEvent, Rung, TurnClaim } from '../../src/floor/floorTypes.js';
import { hashString } from './prng.js';
import { type ChannelSpec, type Inbound, scriptTurn, turnTiming } from './traffic.js';

/** What the benchmark needs from a floor: what the floor driver drives. */
export type FloorLike = DrivenFloor;

export type FloorFactory = (options: ChannelFloorOptions) => FloorLike;

/** Event kinds, as stored next to each latency sample. */
export const EVENT_KINDS = [
  'message',
  'turn.delivered',
  'turn.generated',
  'tick',
  'summon',
  'dismiss',
  'turn.failed',
] as const;
export type EventKind = (typeof EVENT_KINDS)[number];
/** Flag on a kind code: the sample is one of its floor's first two text scans. */
export const COLD = 0x80;
const KIND_CODE: Record<string, number> = Object.fromEntries(EVENT_KINDS.map((k, i) => [k, i]));

export function buildFloors(
  factory: FloorFactory,
  channels: readonly ChannelSpec[],
  config: CoordinationConfig,
  startAt: number,
  withPresences: boolean,
): FloorLike[] {
  return channels.map((spec) =>
    factory({
      channelId: spec.channelId,
      config,
      roster: spec.roster,
      present: withPresences ? spec.present : [],
      at: startAt,
    }),
  );
}

interface ChannelRun {
  spec: ChannelSpec;
  roster: Map<string, AvatarProfile>;
  present: string[];
  /** The channel's own simulated time: it moves when the channel gets its next inbound item. */
  clock: SimulatedClock;
  driver: FloorDriver;
  /** Turns the floor released before they were played out. */
  released: Set<string>;
  lastTickAt: number;
  lastAvatarMessage: { messageId: string; avatarId: string } | undefined;
  /** Events so far that made the floor scan a text (messages and delivered turns). */
  scans: number;
  /** Running hash of every effect the floor returned (when recording decisions). */
  stream: number;
}

export interface RunStats {
  /** floor.handle calls. */
  events: number;
  /** Inbound human messages plus delivered avatar turns. */
  messages: number;
  humanMessages: number;
  delivered: number;
  byKind: Record<EventKind, number>;
  claims: number;
  claimsByRung: Partial<Record<Rung, number>>;
  suppressed: number;
  threadsOpened: number;
  threadsEnded: number;
  rejected: Record<string, number>;
  /** Deadlines that did not move after a tick at them (would loop forever; skipped). */
  staleDeadlines: number;
  /** Time inside floor calls (handle + nextDeadline), ms. */
  floorMs: number;
  /** Time inside handle only, ms. */
  handleMs: number;
  /** Whole driver loop, ms, and the process CPU time over it. */
  wallMs: number;
  cpuMs: number;
  /**
   * Per-handle latency in ms, and the event kind code of each sample, with {@link COLD} set on a
   * floor's first two text scans: V8 compiles the floor's mention regex on the first and tiers it
   * up to native code on the second (unless its RegExp cache already holds that roster's regex).
   */
  latencies: Float64Array;
  kinds: Uint8Array;
  /** Samples flagged cold, and their handle time in ms. */
  coldEvents: number;
  coldMs: number;
  channels: number;
  /** Trigger key -> the `avatarId:rung` pairs claimed for it (for the agreement check). */
  decisions: Map<string, string> | undefined;
  /**
   * Channel id -> hash of the channel's whole effect stream (every effect of every call, as JSON,
   * in order): equal hashes mean the floors returned the very same effects, reasons included.
   */
  streams: Map<string, number> | undefined;
  /** Simulated time span covered, ms (max over channels). */
  simulatedMs: number;
}

export interface DriveOptions {
  seed: number;
  recordDecisions: boolean;
}

/**
 * A hash (FNV-1a) of a value read as JSON with every object's keys in sorted order (undefined
 * properties left out, as JSON does), so two floors that build the same effect with its keys in
 * another order hash alike. It walks the value instead of building its text: the driver's
 * bookkeeping then leaves little garbage, and the young-generation collections that garbage would
 * cause do not land inside the floor's timed calls. Only ever compared with itself.
 */
export function hashCanonical(value: unknown, h0: number): number {
  let h = h0;
  const mix = (c: number) => {
    h = Math.imul(h ^ c, 0x01000193);
  };
  const str = (s: string) => {
    for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  };
  const walk = (v: unknown): void => {
    if (typeof v === 'string') {
      mix(34);
      str(v);
      mix(34);
    } else if (typeof v === 'number' && Number.isSafeInteger(v)) {
      mix(35);
      mix(v >>> 0);
      mix(Math.floor(v / 4294967296) >>> 0);
    } else if (typeof v !== 'object' || v === null) str(String(v));
    else if (Array.isArray(v)) {
      mix(91);
      for (let i = 0; i < v.length; i++) {
        if (i > 0) mix(44);
        walk(v[i]);
      }
      mix(93);
    } else {
      const record = v as Record<string, unknown>;
      mix(123);
      for (const key of Object.keys(record).sort()) {
        const item = record[key];
        if (item === undefined) continue;
        str(key);
        mix(58);
        walk(item);
      }
      mix(125);
    }
  };
  walk(value);
  return h >>> 0;
}

/** Key of the decision a claim belongs to: the message it answers, or its anchor for scheduled turns. */
const decisionKey = (claim: TurnClaim) => claim.triggerMessageId ?? `${claim.anchorMessageId}#${claim.kind}`;

/** An empty accumulator; {@link drive} appends to it, batch after batch. */
export function createStats(recordDecisions: boolean): RunStats {
  return {
    events: 0,
    messages: 0,
    humanMessages: 0,
    delivered: 0,
    byKind: Object.fromEntries(EVENT_KINDS.map((k) => [k, 0])) as Record<EventKind, number>,
    claims: 0,
    claimsByRung: {},
    suppressed: 0,
    threadsOpened: 0,
    threadsEnded: 0,
    rejected: {},
    staleDeadlines: 0,
    floorMs: 0,
    handleMs: 0,
    wallMs: 0,
    cpuMs: 0,
    latencies: new Float64Array(1 << 16),
    kinds: new Uint8Array(1 << 16),
    coldEvents: 0,
    coldMs: 0,
    channels: 0,
    decisions: recordDecisions ? new Map() : undefined,
    streams: recordDecisions ? new Map() : undefined,
    simulatedMs: 0,
  };
}

/** The samples recorded so far (the buffers are over-allocated while a run goes on). */
export function samples(stats: RunStats): { latencies: Float64Array; kinds: Uint8Array } {
  return {
    latencies: stats.latencies.subarray(0, stats.events),
    kinds: stats.kinds.subarray(0, stats.events),
  };
}

/** Runs `channels` through `floors` (one floor per channel, same order), adding to `stats`. */
export function drive(
  floors: readonly FloorLike[],
  channels: readonly ChannelSpec[],
  options: DriveOptions,
  stats: RunStats,
): RunStats {
  stats.channels += channels.length;
  let capacity = stats.latencies.length;
  let latencies = stats.latencies;
  let kinds = stats.kinds;
  const decisions = stats.decisions;
  const streams = stats.streams;

  /** The floor as the driver sees it: every call into it timed, and the call's bookkeeping after. */
  const timed = (floor: FloorLike, run: () => ChannelRun): DrivenFloor => ({
    handle(event) {
      const t0 = performance.now();
      const effects = floor.handle(event);
      const ch = run();
      const t1 = performance.now();
      const n = stats.events++;
      if (n === capacity) {
        capacity *= 2;
        const l = new Float64Array(capacity);
        l.set(latencies);
        latencies = l;
        const k = new Uint8Array(capacity);
        k.set(kinds);
        kinds = k;
        stats.latencies = latencies;
        stats.kinds = kinds;
      }
      latencies[n] = t1 - t0;
      const code = KIND_CODE[event.type] ?? 0;
      let cold = false;
      if (event.type === 'message' || event.type === 'turn.delivered') cold = ++ch.scans <= 2;
      kinds[n] = cold ? code | COLD : code;
      if (cold) {
        stats.coldEvents++;
        stats.coldMs += t1 - t0;
      }
      stats.handleMs += t1 - t0;
      stats.floorMs += t1 - t0;
      stats.byKind[EVENT_KINDS[code] as EventKind]++;

      // Untimed bookkeeping from here on (the effects themselves: see onEffect).
      let key: string | undefined;
      if (event.type === 'message') {
        stats.messages++;
        stats.humanMessages++;
        key = event.messageId;
      } else if (event.type === 'turn.delivered') {
        stats.messages++;
        stats.delivered++;
        key = event.messageId;
      } else if (event.type === 'summon' && event.messageId !== undefined) {
        key = `${event.messageId}#greeting`;
      } else if (event.type === 'tick') {
        ch.lastTickAt = event.at;
      }
      if (decisions && key !== undefined && !decisions.has(key)) decisions.set(key, '');
      if (streams) ch.stream = hashCanonical(effects, ch.stream);
      return effects;
    },
    nextDeadline() {
      const t0 = performance.now();
      const d = floor.nextDeadline();
      stats.floorMs += performance.now() - t0;
      return d;
    },
  });

  const onEffect = (ch: ChannelRun, e: FloorEffect) => {
    switch (e.type) {
      case 'turn.claimed': {
        const claim = e.turn;
        stats.claims++;
        stats.claimsByRung[claim.rung] = (stats.claimsByRung[claim.rung] ?? 0) + 1;
        if (decisions) {
          const k = decisionKey(claim);
          const prev = decisions.get(k);
          decisions.set(
            k,
            prev ? `${prev},${claim.avatarId}:${claim.rung}` : `${claim.avatarId}:${claim.rung}`,
          );
        }
        break;
      }
      case 'turn.released':
        ch.released.add(e.turnId);
        break;
      case 'candidate.suppressed':
        stats.suppressed++;
        break;
      case 'thread.opened':
        stats.threadsOpened++;
        break;
      case 'thread.ended':
        stats.threadsEnded++;
        break;
      case 'presence.summoned':
        if (!ch.present.includes(e.avatarId)) ch.present.push(e.avatarId);
        break;
      case 'presence.dismissed': {
        const i = ch.present.indexOf(e.avatarId);
        if (i >= 0) ch.present.splice(i, 1);
        break;
      }
      case 'event.rejected':
        stats.rejected[e.code] = (stats.rejected[e.code] ?? 0) + 1;
        break;
      default:
        break;
    }
  };

  /** A claimed turn: generated after its latency, then delivered (scripted from who is present then) or failed. */
  const play = (ch: ChannelRun, claim: TurnClaim) => {
    const timing = turnTiming(options.seed, claim.turnId);
    ch.clock.setTimer(claim.claimedAt + timing.generateMs, () => {
      if (ch.released.has(claim.turnId)) return;
      ch.driver.apply({ type: 'turn.generated', at: ch.clock.now(), turnId: claim.turnId });
      ch.clock.setTimer(ch.clock.now() + timing.deliverMs, () => {
        if (ch.released.has(claim.turnId)) return;
        const at = ch.clock.now();
        if (timing.fails) {
          ch.driver.apply({ type: 'turn.failed', at, turnId: claim.turnId, reason: 'scripted failure' });
          return;
        }
        const script = scriptTurn(options.seed, claim, ch.present, ch.roster);
        const messageId = `${claim.turnId}:m`;
        ch.driver.apply({
          type: 'turn.delivered',
          at,
          turnId: claim.turnId,
          messageId,
          text: script.text,
          ...(script.mentions ? { mentions: script.mentions } : {}),
          ...(script.replyTo ? { replyTo: script.replyTo } : {}),
        });
        ch.lastAvatarMessage = { messageId, avatarId: claim.avatarId };
      });
    });
  };

  const runs: ChannelRun[] = channels.map((spec, i) => {
    const clock = new SimulatedClock(spec.inbound[0]?.event.at ?? 0);
    const ch: ChannelRun = {
      spec,
      roster: new Map(spec.roster.map((a) => [a.id, a])),
      present: [...spec.present],
      clock,
      driver: new FloorDriver({
        floor: timed(floors[i] as FloorLike, () => ch),
        clock,
        hooks: {
          onEffect: (effect) => onEffect(ch, effect),
          onClaim: (claim) => play(ch, claim),
          // A deadline a tick does not move would keep the channel ticking forever: count it, stop ticking.
          onStuckDeadline: () => {
            stats.staleDeadlines++;
            ch.driver.stop();
          },
        },
      }),
      released: new Set(),
      lastTickAt: Number.NEGATIVE_INFINITY,
      lastAvatarMessage: undefined,
      scans: 0,
      stream: hashString(spec.channelId),
    };
    return ch;
  });

  const resolve = (ch: ChannelRun, inbound: Inbound): FloorEvent => {
    const last = ch.lastAvatarMessage;
    if (!inbound.replyToLastAvatar || !last || inbound.event.type !== 'message') return inbound.event;
    return { ...inbound.event, replyTo: { messageId: last.messageId, avatarId: last.avatarId } };
  };

  const cpu0 = process.cpuUsage();
  const w0 = performance.now();
  let longest = 0;
  for (const r of runs) longest = Math.max(longest, r.spec.inbound.length);
  for (let k = 0; k < longest; k++) {
    for (const ch of runs) {
      const inbound = ch.spec.inbound[k];
      if (!inbound) continue;
      // Turns and ticks due by the time the item arrives happen first, in time order.
      ch.clock.advanceSync(inbound.event.at - ch.clock.now());
      ch.driver.apply(resolve(ch, inbound));
    }
  }
  // Let every channel settle: deliver what is in flight and run out the deadlines.
  for (const ch of runs) while (ch.clock.fireNext()) {}
  stats.wallMs += performance.now() - w0;
  const cpu = process.cpuUsage(cpu0);
  stats.cpuMs += (cpu.user + cpu.system) / 1000;
  for (const ch of runs) {
    streams?.set(ch.spec.channelId, ch.stream);
    const first = ch.spec.inbound[0]?.event.at ?? 0;
    stats.simulatedMs = Math.max(
      stats.simulatedMs,
      Math.max(ch.lastTickAt, ch.spec.inbound.at(-1)?.event.at ?? 0) - first,
    );
  }
  return stats;
}
