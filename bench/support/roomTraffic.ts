/**
 * Deterministic traffic for the delivery benchmark's end-to-end run (bench/delivery.ts), generated up
 * front (never timed): a global cast of avatars, each resident in some of C channels (3-5 residents
 * per channel, `residentIn`), and rounds of inbound events, one per channel per round, all of a round
 * at the same simulated instant. About half the human messages address a present avatar by name; the
 * rest are unaddressed chat, often about a topic some resident cares about (what the initiative rung
 * looks at). About 3% of the events summon a guest avatar and 1.5% dismiss one.
 *
 * One message per channel per round is what lets the runtime and the bare floor see the very same
 * traffic: the runtime is awaited idle after every round, so a channel's turns have all been
 * delivered before its next message arrives, as the bare replay (which completes turns at once)
 * assumes.
 */
import type { AvatarDefinitionInput } from '../../src/actors/avatarDefinition.js';
import { hashString, intIn, mulberry32, pick, type Rng } from './prng.js';
import { START_AT, EMOJI as TRAFFIC_EMOJI, FIRST as TRAFFIC_FIRST } from './traffic.js';

/** 2025-11-13T12:00:00Z, as the other benchmarks and the simulator. */
export const ROOM_START_AT = START_AT;

/** The transport kind every channel of the benchmark uses. */
export const ROOM_KIND = 'bench';

// The cast draws on the coordination benchmark's name pools (the first 24 first names and 16 emojis,
// so room traffic stays what it was measured with).
const FIRST = TRAFFIC_FIRST.slice(0, 24);
const LAST = ['Vale', 'Holt', 'Marsh', 'Okafor', 'Moreau', 'Tanaka', 'Reyes', 'Novak'];
const EMOJI = TRAFFIC_EMOJI.slice(0, 16);
const TOPICS = [
  'jazz',
  'chess',
  'coffee',
  'rust',
  'typescript',
  'gardening',
  'astronomy',
  'football',
  'cooking',
  'poetry',
  'hiking',
  'movies',
  'history',
  'music',
  'travel',
  'books',
];
const PERSONAS = [
  'a retired lighthouse keeper who collects sea glass',
  'a jazz pianist with strong opinions',
  'a patient chess coach. Loves endgames.',
  'an amateur astronomer who names comets',
  'a pastry chef who explains everything with bread',
  'a hiking guide, always planning the next trail',
];
const HUMANS = ['alice', 'bob', 'carmen', 'deshawn', 'eun-ji', 'farid', 'gwen', 'hiro', 'ines', 'jomo'];

export interface RoomChannel {
  /** `bench:ch<N>`: the runtime's channel key, and the bare floor's channel id. */
  key: string;
  ref: { kind: string; id: string };
  /** Avatar ids resident (present from the start). */
  residents: string[];
}

/** One inbound message, exactly as the runtime is sent it. */
export interface RoomMessage {
  type: 'channel.message';
  at: number;
  channel: { kind: string; id: string };
  messageId: string;
  author: { kind: 'human'; id: string; name: string };
  text: string;
}

/** Someone summons an avatar that is not in the channel. */
export interface RoomSummon {
  type: 'avatar.summon';
  at: number;
  channel: { kind: string; id: string };
  avatarId: string;
  by: { id: string; name: string };
  messageId: string;
}

/** Someone dismisses an avatar that was summoned earlier. */
export interface RoomDismiss {
  type: 'avatar.dismiss';
  at: number;
  channel: { kind: string; id: string };
  avatarId: string;
}

/** An inbound event, exactly as the runtime is sent it. */
export type RoomEvent = RoomMessage | RoomSummon | RoomDismiss;

export interface RoomRound {
  at: number;
  /** One inbound event per channel, channel order. */
  events: { channel: number; event: RoomEvent }[];
}

export interface RoomCounts {
  /** Inbound events in all: human messages, summons and dismissals. */
  inbound: number;
  messages: number;
  summons: number;
  dismissals: number;
  /** Messages that name one resident, or two. */
  mentionOne: number;
  mentionTwo: number;
  /** Unaddressed messages about a topic a resident cares about, and plain chat. */
  onTopic: number;
  smallTalk: number;
}

export interface RoomTraffic {
  avatars: AvatarDefinitionInput[];
  channels: RoomChannel[];
  rounds: RoomRound[];
  counts: RoomCounts;
}

export interface RoomTrafficOptions {
  channels: number;
  /** Inbound events in all; rounds = ceil(events / channels), the last one partial. */
  events: number;
  /** Size of the global cast (every channel's floor knows all of them, as in the runtime). */
  avatars: number;
  seed: number;
  /** Channel ids start here (warm-up traffic uses other channels than the measured run). */
  channelOffset?: number;
}

/** The global cast: distinct names, a third with an emoji of their own, three topics each. */
function cast(size: number, rng: Rng): AvatarDefinitionInput[] {
  if (size > FIRST.length * (LAST.length + 1))
    throw new Error(`at most ${FIRST.length * (LAST.length + 1)} avatars`);
  const out: AvatarDefinitionInput[] = [];
  const names = new Set<string>();
  let emojis = 0;
  for (let i = 0; out.length < size; i++) {
    const first = FIRST[i % FIRST.length] as string;
    const round = Math.floor(i / FIRST.length);
    const name = round === 0 ? first : `${first} ${LAST[(round - 1 + i) % LAST.length]}`;
    if (names.has(name)) continue;
    names.add(name);
    const topics = new Set<string>();
    while (topics.size < 3) topics.add(pick(rng, TOPICS));
    const withEmoji = out.length % 3 === 0 && emojis < EMOJI.length;
    out.push({
      id: `av${out.length}`,
      name,
      ...(withEmoji ? { emoji: EMOJI[emojis++] as string } : {}),
      persona: `${capitalised(pick(rng, PERSONAS))}.`,
      topics: [...topics],
      residentIn: [],
    });
  }
  return out;
}

const capitalised = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

export function generateRoomTraffic(o: RoomTrafficOptions): RoomTraffic {
  const rng = mulberry32(o.seed ^ 0x0de1);
  const avatars = cast(o.avatars, rng);
  const offset = o.channelOffset ?? 0;
  const channels: RoomChannel[] = [];
  const rngs: Rng[] = [];
  const humans: { kind: 'human'; id: string; name: string }[][] = [];
  for (let c = 0; c < o.channels; c++) {
    const n = offset + c;
    const crng = mulberry32(hashString(`room:${n}`) ^ o.seed);
    const ref = { kind: ROOM_KIND, id: `ch${n}` };
    const key = `${ref.kind}:${ref.id}`;
    const count = intIn(crng, 3, 5);
    const residents: string[] = [];
    while (residents.length < Math.min(count, avatars.length)) {
      const a = pick(crng, avatars);
      if (residents.includes(a.id)) continue;
      residents.push(a.id);
      a.residentIn = [...(a.residentIn ?? []), key];
    }
    channels.push({ key, ref, residents });
    rngs.push(crng);
    humans.push(
      Array.from({ length: 4 }, (_, k) => ({
        kind: 'human' as const,
        id: `u${n}.${k}`,
        name: HUMANS[(n + k * 3) % HUMANS.length] as string,
      })),
    );
  }
  const byId = new Map(avatars.map((a) => [a.id, a]));
  const counts: RoomCounts = {
    inbound: 0,
    messages: 0,
    summons: 0,
    dismissals: 0,
    mentionOne: 0,
    mentionTwo: 0,
    onTopic: 0,
    smallTalk: 0,
  };
  /** Who is in each channel now: the residents, and who was summoned and not dismissed. */
  const present = channels.map((ch) => [...ch.residents]);
  const rounds: RoomRound[] = [];
  let at = ROOM_START_AT + 1_000;
  for (let k = 0; counts.inbound < o.events; k++) {
    // 10-30 s between rounds: cooldowns (2 min) pass within a few rounds, threads expire (3 min).
    at += intIn(rng, 10_000, 30_000);
    const events: RoomRound['events'] = [];
    for (let c = 0; c < channels.length && counts.inbound < o.events; c++) {
      const ch = channels[c] as RoomChannel;
      const crng = rngs[c] as Rng;
      const here = present[c] as string[];
      const human = pick(crng, humans[c] as { kind: 'human'; id: string; name: string }[]);
      counts.inbound++;
      const r = crng();
      // Now and then a guest: summoned (it greets, then follows up 3 s later naming who is here,
      // which starts avatar-to-avatar exchanges and threads), and dismissed again later.
      const guests = here.filter((id) => !ch.residents.includes(id));
      if (r < 0.03 && here.length < 7) {
        const absent = avatars.filter((a) => !here.includes(a.id));
        if (absent.length > 0) {
          const a = pick(crng, absent);
          here.push(a.id);
          counts.summons++;
          events.push({
            channel: c,
            event: {
              type: 'avatar.summon',
              at,
              channel: ch.ref,
              avatarId: a.id,
              by: { id: human.id, name: human.name },
              messageId: `${ch.ref.id}:s${k}`,
            },
          });
          continue;
        }
      }
      if (r >= 0.03 && r < 0.045 && guests.length > 0) {
        const id = pick(crng, guests);
        here.splice(here.indexOf(id), 1);
        counts.dismissals++;
        events.push({ channel: c, event: { type: 'avatar.dismiss', at, channel: ch.ref, avatarId: id } });
        continue;
      }
      const inRoom = here.map((id) => byId.get(id) as AvatarDefinitionInput);
      let text: string;
      if (r < 0.5) {
        const a = pick(crng, inRoom);
        const topic = pick(crng, a.topics ?? TOPICS);
        if (crng() < 0.15) {
          const b = pick(
            crng,
            inRoom.filter((x) => x !== a),
          );
          text = pick(crng, [
            `hey ${a.name} and ${b.name}, any thoughts on ${topic}?`,
            `${a.name}, ${b.name}: settle this, is ${topic} overrated?`,
          ]);
          counts.mentionTwo++;
        } else {
          text = pick(crng, [
            `${a.name}, what do you think about ${topic}?`,
            `I asked ${a.name} about ${topic} yesterday, still curious`,
            `${a.name} can you explain ${topic} like I'm five`,
            `ok ${a.name}, your turn: ${topic}?`,
          ]);
          counts.mentionOne++;
        }
      } else if (r < 0.75) {
        const topic = pick(crng, pick(crng, inRoom).topics ?? TOPICS);
        text = pick(crng, [
          `anyone here into ${topic}?`,
          `I've been reading about ${topic} lately, it is fascinating`,
          `is it just me or is ${topic} everywhere lately`,
          `hot take: ${topic} is better on weekends`,
        ]);
        counts.onTopic++;
      } else {
        text = pick(crng, [
          'lol that is wild',
          'brb',
          'good morning everyone',
          'what did I miss?',
          'haha fair',
        ]);
        counts.smallTalk++;
      }
      counts.messages++;
      events.push({
        channel: c,
        event: {
          type: 'channel.message',
          at,
          channel: ch.ref,
          messageId: `${ch.ref.id}:h${k}`,
          author: human,
          text,
        },
      });
    }
    rounds.push({ at, events });
  }
  return { avatars, channels, rounds, counts };
}
