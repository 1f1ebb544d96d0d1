/**
 * The bare coordination core on the delivery benchmark's traffic: one {@link ChannelFloor} per
 * channel, built as the runtime builds it (the whole cast as roster, the residents present), fed the
 * same rounds through the {@link FloorDriver} the channel actor uses (on a simulated clock per
 * channel), with every claimed turn completed at once (turn.generated, then turn.delivered with the
 * offline scripted model's text) and the driver's tick firing at the floor's `nextDeadline()` as time
 * passes. What the runtime does around the floor (validation, history, prompts, preparation, routing,
 * outbox, promises) is left out; only the calls into the floor are timed, and separately the whole
 * replay loop (which also writes the scripted replies).
 */

import { SimulatedClock } from '../../src/actors/clock.js';
import { scriptedReply } from '../../src/adapters/llm/scriptedReplies.js';
import type { CoordinationConfig } from '../../src/config/coordinationConfig.js';
import { clipText } from '../../src/delivery/clipText.js';
import { ChannelFloor } from '../../src/floor/channelFloor.js';
import { type DrivenFloor, FloorDriver } from '../../src/floor/floorDriver.js';
import type { AvatarProfile, FloorEvent, TurnClaim } from '../../src/floor/floorTypes.js';
import type { RoomEvent, RoomTraffic } from './roomTraffic.js';

export interface BareStats {
  inbound: number;
  /** floor.handle calls, by kind. */
  events: number;
  ticks: number;
  claims: number;
  delivered: number;
  failed: number;
  /** Time inside handle + nextDeadline, ms. */
  floorMs: number;
  /** The whole replay loop (floor calls, scripted replies, bookkeeping), ms, and its CPU time. */
  wallMs: number;
  cpuMs: number;
}

interface Room {
  floor: ChannelFloor;
  clock: SimulatedClock;
  driver: FloorDriver;
  /** Turns released before they were completed. */
  released: Set<string>;
}

/** Builds the floors for `traffic` at its first round's time (the runtime activates them then). */
export function buildRoomFloors(
  traffic: RoomTraffic,
  roster: AvatarProfile[],
  config: CoordinationConfig,
): ChannelFloor[] {
  const at = traffic.rounds[0]?.at ?? 0;
  return traffic.channels.map(
    (ch) => new ChannelFloor({ channelId: ch.key, config, roster, present: ch.residents, at }),
  );
}

export function replayBare(
  traffic: RoomTraffic,
  floors: ChannelFloor[],
  roster: AvatarProfile[],
  config: CoordinationConfig,
): BareStats {
  const replay = bareReplay(traffic, floors, roster, config);
  const cpu0 = process.cpuUsage();
  const w0 = performance.now();
  for (let r = 0; r < traffic.rounds.length; r++) replay.round(r);
  replay.stats.wallMs = performance.now() - w0;
  const cpu = process.cpuUsage(cpu0);
  replay.stats.cpuMs = (cpu.user + cpu.system) / 1000;
  return replay.stats;
}

/** The bare replay one round at a time (to run it beside the runtime, round by round). */
export interface BareReplay {
  /** Counts so far; `floorMs` is the time inside the floor's calls of the rounds replayed. */
  stats: BareStats;
  /** Replays round `index` of the traffic (rounds in order, each once). */
  round(index: number): void;
}

export function bareReplay(
  traffic: RoomTraffic,
  floors: ChannelFloor[],
  roster: AvatarProfile[],
  config: CoordinationConfig,
): BareReplay {
  const stats: BareStats = {
    inbound: 0,
    events: 0,
    ticks: 0,
    claims: 0,
    delivered: 0,
    failed: 0,
    floorMs: 0,
    wallMs: 0,
    cpuMs: 0,
  };
  const byId = new Map(roster.map((a) => [a.id, a]));
  const avatarNames = roster.flatMap((a) => [a.name, ...(a.aliases ?? [])]);
  const isAvatar = (id: string) => byId.has(id);
  const start = traffic.rounds[0]?.at ?? 0;
  let seq = 0;

  /** The floor as the driver sees it: every call into it timed. */
  const timed = (floor: ChannelFloor): DrivenFloor => ({
    handle(event) {
      const t0 = performance.now();
      const effects = floor.handle(event);
      stats.floorMs += performance.now() - t0;
      stats.events++;
      if (event.type === 'tick') stats.ticks++;
      return effects;
    },
    nextDeadline() {
      const t0 = performance.now();
      const d = floor.nextDeadline();
      stats.floorMs += performance.now() - t0;
      return d;
    },
  });

  /** A claimed turn, completed at once: generated, then delivered with the scripted text (or failed). */
  const complete = (room: Room, claim: TurnClaim) => {
    const at = room.clock.now();
    if (room.released.has(claim.turnId)) return;
    room.driver.apply({ type: 'turn.generated', at, turnId: claim.turnId });
    if (room.released.has(claim.turnId)) return;
    const avatar = byId.get(claim.avatarId) ?? { id: claim.avatarId, name: claim.avatarId };
    const maxChars = claim.context.maxChars;
    const reply = scriptedReply({
      turn: claim,
      avatar,
      isAvatar,
      greetingMaxChars: Math.min(maxChars ?? config.greetingMaxChars, maxChars ?? Number.POSITIVE_INFINITY),
      spokenInThread:
        claim.threadId !== undefined ? room.driver.spokenInThread(claim.threadId, claim.avatarId) : 0,
      avatarNames,
    });
    const text = maxChars === undefined ? reply.text.trim() : clipText(reply.text.trim(), maxChars);
    if (text === '') {
      stats.failed++;
      room.driver.apply({ type: 'turn.failed', at, turnId: claim.turnId, reason: 'empty' });
      return;
    }
    stats.delivered++;
    room.driver.apply({
      type: 'turn.delivered',
      at,
      turnId: claim.turnId,
      messageId: `bare-${++seq}`,
      text,
      ...(reply.mentions.length > 0 ? { mentions: reply.mentions } : {}),
    });
  };

  // One simulated clock per room, moved only when the room gets an event (as an idle channel's
  // timers wait for it): ticks due by then fire first, at their deadlines, and every turn an event
  // leads to completes at once, first claimed first.
  const rooms: Room[] = floors.map((floor) => {
    const clock = new SimulatedClock(start);
    const released = new Set<string>();
    const room: Room = {
      floor,
      clock,
      released,
      driver: new FloorDriver({
        floor: timed(floor),
        clock,
        hooks: {
          onClaim: (claim) => {
            stats.claims++;
            clock.setTimer(clock.now(), () => complete(room, claim));
          },
          onRelease: (release) => released.add(release.turnId),
        },
      }),
    };
    return room;
  });

  const round = (index: number) => {
    const round = traffic.rounds[index];
    if (!round) return;
    for (const { channel, event } of round.events) {
      const room = rooms[channel] as Room;
      room.clock.advanceSync(round.at - room.clock.now());
      stats.inbound++;
      room.driver.apply(floorEvent(event));
      room.clock.advanceSync(0);
      room.released.clear();
    }
  };
  return { stats, round };
}

/** The floor event a channel actor makes of an inbound event. */
function floorEvent(event: RoomEvent): FloorEvent {
  switch (event.type) {
    case 'channel.message':
      return {
        type: 'message',
        at: event.at,
        messageId: event.messageId,
        author: event.author,
        text: event.text,
      };
    case 'avatar.summon':
      return {
        type: 'summon',
        at: event.at,
        avatarId: event.avatarId,
        by: event.by,
        messageId: event.messageId,
      };
    case 'avatar.dismiss':
      return { type: 'dismiss', at: event.at, avatarId: event.avatarId };
  }
}
