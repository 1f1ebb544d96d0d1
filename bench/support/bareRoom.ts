/**
 * The bare coordination core on the delivery benchmark's traffic: one {@link ChannelFloor} per
 * channel, built as the runtime builds it (the whole cast as roster, the residents present), fed the
 * same rounds, with every claimed turn completed at once (turn.generated, then turn.delivered with
 * the offline scripted model's text) and a `tick` whenever a round's time passes the floor's
 * `nextDeadline()`, as the runtime's timers would. What the runtime does around the floor (validation,
 * history, prompts, preparation, routing, outbox, promises) is left out; only the calls into the floor
 * are timed, and separately the whole replay loop (which also writes the scripted replies).
 */

import { scriptedReply } from '../../src/adapters/llm/scriptedReplies.js';
import type { CoordinationConfig } from '../../src/config/coordinationConfig.js';
import { clipText } from '../../src/delivery/clipText.js';
import { ChannelFloor } from '../../src/machines/channelFloor.js';
import type { AvatarProfile, FloorEffect, FloorEvent, TurnClaim } from '../../src/machines/floorTypes.js';
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
  spoken: Map<string, number>;
  lastTickAt: number;
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
  const rooms: Room[] = floors.map((floor) => ({
    floor,
    spoken: new Map(),
    lastTickAt: Number.NEGATIVE_INFINITY,
  }));
  let seq = 0;

  const handle = (room: Room, event: FloorEvent): FloorEffect[] => {
    const t0 = performance.now();
    const effects = room.floor.handle(event);
    stats.floorMs += performance.now() - t0;
    stats.events++;
    return effects;
  };
  const deadline = (room: Room): number | undefined => {
    const t0 = performance.now();
    const d = room.floor.nextDeadline();
    stats.floorMs += performance.now() - t0;
    return d;
  };
  const credit = (room: Room, threadId: string, avatarId: string) => {
    const key = `${threadId}\u0000${avatarId}`;
    room.spoken.set(key, (room.spoken.get(key) ?? 0) + 1);
  };

  /** Applies one event and completes every turn it leads to, first claimed first, at `at`. */
  const run = (room: Room, first: FloorEvent, at: number) => {
    const queue: TurnClaim[] = [];
    const released = new Set<string>();
    const take = (event: FloorEvent, effects: FloorEffect[], delivering?: string) => {
      for (const e of effects) {
        switch (e.type) {
          case 'turn.claimed':
            stats.claims++;
            queue.push(e.turn);
            break;
          case 'turn.released':
            released.add(e.turnId);
            break;
          case 'thread.opened': {
            // As the channel actor does: whoever's message opened the thread spoke in it once.
            const opener =
              event.type === 'message' && event.author.kind === 'avatar'
                ? event.author.id
                : event.type === 'turn.delivered'
                  ? delivering
                  : undefined;
            if (opener !== undefined) credit(room, e.threadId, opener);
            break;
          }
          case 'turn.consumed':
            if (e.threadId !== undefined) credit(room, e.threadId, e.avatarId);
            break;
          default:
            break;
        }
      }
    };
    take(first, handle(room, first));
    for (let i = 0; i < queue.length; i++) {
      const claim = queue[i] as TurnClaim;
      if (released.has(claim.turnId)) continue;
      const generated: FloorEvent = { type: 'turn.generated', at, turnId: claim.turnId };
      take(generated, handle(room, generated));
      if (released.has(claim.turnId)) continue;
      const avatar = byId.get(claim.avatarId) ?? { id: claim.avatarId, name: claim.avatarId };
      const maxChars = claim.context.maxChars;
      const reply = scriptedReply({
        turn: claim,
        avatar,
        isAvatar,
        greetingMaxChars: Math.min(maxChars ?? config.greetingMaxChars, maxChars ?? Number.POSITIVE_INFINITY),
        spokenInThread:
          claim.threadId !== undefined
            ? (room.spoken.get(`${claim.threadId}\u0000${claim.avatarId}`) ?? 0)
            : 0,
        avatarNames,
      });
      const text = maxChars === undefined ? reply.text.trim() : clipText(reply.text.trim(), maxChars);
      if (text === '') {
        stats.failed++;
        const failed: FloorEvent = { type: 'turn.failed', at, turnId: claim.turnId, reason: 'empty' };
        take(failed, handle(room, failed));
        continue;
      }
      stats.delivered++;
      const delivered: FloorEvent = {
        type: 'turn.delivered',
        at,
        turnId: claim.turnId,
        messageId: `bare-${++seq}`,
        text,
        ...(reply.mentions.length > 0 ? { mentions: reply.mentions } : {}),
      };
      take(delivered, handle(room, delivered), claim.avatarId);
    }
  };

  const cpu0 = process.cpuUsage();
  const w0 = performance.now();
  for (const round of traffic.rounds) {
    for (const { channel, event } of round.events) {
      const room = rooms[channel] as Room;
      // Ticks due by now, at their deadlines (the runtime's timers fire there).
      for (let d = deadline(room); d !== undefined && d <= round.at; d = deadline(room)) {
        if (d <= room.lastTickAt) break; // a deadline a tick did not move: nothing more is due
        room.lastTickAt = d;
        stats.ticks++;
        run(room, { type: 'tick', at: d }, d);
      }
      stats.inbound++;
      run(room, floorEvent(event), round.at);
    }
  }
  stats.wallMs = performance.now() - w0;
  const cpu = process.cpuUsage(cpu0);
  stats.cpuMs = (cpu.user + cpu.system) / 1000;
  return stats;
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
