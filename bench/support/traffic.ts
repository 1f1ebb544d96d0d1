/**
 * Deterministic channel traffic for the coordination benchmark, generated up front (never timed).
 *
 * Every channel draws its avatars from one global pool (an avatar is a global character that sits
 * in many channels) and gets its own PRNG stream seeded from (seed, channel index), so channel 7
 * sees the same traffic whether the run has 100 or 10,000 channels.
 */
import type { AvatarProfile, FloorEvent, TurnClaim } from '../../src/floor/floorTypes.js';
import { hashString, intIn, mulberry32, pick, type Rng } from './prng.js';

/** 2025-11-13T12:00:00Z, the seed proposal's date (same origin as the simulator). */
export const START_AT = Date.UTC(2025, 10, 13, 12, 0, 0);

/** First names of the benchmark casts (shared by every traffic generator). */
export const FIRST = [
  'Luna',
  'Orion',
  'Zoë',
  'Björn',
  'Ximena',
  'Kai',
  'Amara',
  'Théo',
  'Saoirse',
  'Mateo',
  'Yuki',
  'Nadia',
  'Rafael',
  'Ingrid',
  'Kofi',
  'Leilani',
  'Dmitri',
  'Priya',
  'Søren',
  'Aiyana',
  'Caspian',
  'Elif',
  'Juniper',
  'Hamid',
  'Marisol',
  'Oskar',
  'Rhea',
  'Tariq',
  'Wren',
  'Zephyr',
  'Ada',
  'Bodhi',
  'Cleo',
  'Dante',
  'Esme',
  'Felix',
  'Greta',
  'Hugo',
  'Isla',
  'Jasper',
  'Łucja',
  'Renée',
  'Ödön',
  'Siân',
  'Ana Lucía',
  "D'Arcy",
];
/** Family names of the benchmark casts. */
export const LAST = [
  'Vale',
  'Holt',
  'Marsh',
  'Okafor',
  'Lindqvist',
  'Moreau',
  'Tanaka',
  'Reyes',
  'Novak',
  'Quill',
  'Ashdown',
  'Nakamura',
];
const TITLE = ['Captain', 'Doctor', 'Professor', 'Sir', 'Madame', 'Old'];
/** Emojis the benchmark casts wear (and are addressed by). */
export const EMOJI = [
  '🦊',
  '🌙',
  '⚡',
  '🐙',
  '🌵',
  '🔥',
  '🍄',
  '🐝',
  '🎻',
  '🛸',
  '🌊',
  '🍋',
  '🦉',
  '🎲',
  '🪐',
  '🐢',
  '🌸',
  '🧭',
  '🦜',
  '🍵',
  '🎈',
  '🧩',
  '🦔',
  '🌻',
  '🎷',
  '🐳',
  '🍩',
  '🦋',
  '🗝️',
  '🚲',
];
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
  'games',
  'painting',
  'physics',
  'sailing',
];
const HUMANS = ['alice', 'bob', 'carmen', 'deshawn', 'eun-ji', 'farid', 'gwen', 'hiro', 'ines', 'jomo'];

/** Emojis an avatar answers to, in its name or as its `emoji`. */
function emojisOf(a: AvatarProfile): string[] {
  const out = a.emoji ? [a.emoji] : [];
  for (const e of EMOJI) if (a.name.includes(e)) out.push(e);
  return out;
}

/**
 * The global avatar pool: distinct names, most of them multi-word (some with a title), a fifth with
 * an emoji in the name, a third with an `emoji` that addresses them, each with three topics.
 * No hyphenated names: the pool predates the matcher's support for them (3ac2a7d) and is kept as it
 * was, so that figures stay comparable from run to run.
 */
export function avatarPool(size: number, seed: number): AvatarProfile[] {
  const rng = mulberry32(seed ^ 0x5eed);
  const names = new Set<string>();
  const pool: AvatarProfile[] = [];
  for (let i = 0; pool.length < size; i++) {
    const first = pick(rng, FIRST);
    const style = i % 5;
    const name =
      style === 0 && i < FIRST.length * 5
        ? first
        : style === 1 || style === 0
          ? `${first} ${pick(rng, LAST)}`
          : style === 2
            ? `${pick(rng, TITLE)} ${first} ${pick(rng, LAST)}`
            : style === 3
              ? `${first} ${pick(rng, EMOJI)}`
              : `${first} of ${pick(rng, LAST)}`;
    if (names.has(name)) continue;
    names.add(name);
    const topics = new Set<string>();
    while (topics.size < 3) topics.add(pick(rng, TOPICS));
    pool.push({
      id: `av${pool.length}`,
      name,
      ...(pool.length % 3 === 0 ? { emoji: pick(rng, EMOJI) } : {}),
      persona: `${name} is a regular here.`,
      topics: [...topics],
    });
  }
  return pool;
}

/** One inbound item: a prepared event, or a human reply to whatever avatar message came last. */
export interface Inbound {
  event: FloorEvent;
  /** Resolved by the driver at dispatch: reply to the channel's latest avatar message, if any. */
  replyToLastAvatar: boolean;
}

/** A channel: its roster (present avatars first, then spares for summons), humans and traffic. */
export interface ChannelSpec {
  channelId: string;
  roster: AvatarProfile[];
  present: string[];
  inbound: Inbound[];
}

export interface TrafficCounts {
  humanMessages: number;
  mentioning: number;
  platformMentions: number;
  replies: number;
  unaddressed: number;
  summons: number;
  dismissals: number;
}

export interface Traffic {
  channels: ChannelSpec[];
  counts: TrafficCounts;
}

export interface TrafficOptions {
  channels: number;
  /** Inbound items (human messages, summons, dismissals) per channel. */
  perChannel: number;
  /** Avatars present in each channel at the start. */
  avatarsPerChannel: number;
  /** Absent avatars each roster also knows, to be summoned. */
  spares: number;
  pool: readonly AvatarProfile[];
  seed: number;
  /**
   * Distinct casts (rosters) the channels draw from, channel c getting cast c mod casts; 0 gives
   * every channel its own. (When the matcher compiled a regex per roster, fewer casts let V8 share
   * it; the cost of a never-seen roster is measured on its own, see support/cold.ts.)
   */
  casts: number;
}

/** The roster of cast `key`: `count` avatars drawn from the pool. */
export function castRoster(
  key: string,
  pool: readonly AvatarProfile[],
  count: number,
  seed: number,
): AvatarProfile[] {
  return pickRoster(mulberry32(hashString(`cast:${key}`) ^ seed), pool, count);
}

/** Picks a channel's roster: distinct avatars whose emojis do not collide. */
function pickRoster(rng: Rng, pool: readonly AvatarProfile[], count: number): AvatarProfile[] {
  const chosen: AvatarProfile[] = [];
  const ids = new Set<string>();
  const emojis = new Set<string>();
  for (let guard = 0; chosen.length < count && guard < count * 100; guard++) {
    const a = pick(rng, pool);
    if (ids.has(a.id)) continue;
    const es = emojisOf(a);
    if (es.some((e) => emojis.has(e))) continue;
    ids.add(a.id);
    for (const e of es) emojis.add(e);
    chosen.push(a);
  }
  if (chosen.length < count) throw new Error(`avatar pool too small for ${count} avatars per channel`);
  return chosen;
}

/** How a human addresses an avatar: by name, by its emoji, or with a platform mention. */
function address(rng: Rng, a: AvatarProfile, mentions: string[]): string {
  const r = rng();
  if (r < 0.2) {
    mentions.push(a.id);
    return `<@${a.id}>`;
  }
  if (r < 0.3 && a.emoji) return a.emoji;
  return a.name;
}

export function generateTraffic(o: TrafficOptions): Traffic {
  const counts: TrafficCounts = {
    humanMessages: 0,
    mentioning: 0,
    platformMentions: 0,
    replies: 0,
    unaddressed: 0,
    summons: 0,
    dismissals: 0,
  };
  const channels: ChannelSpec[] = [];
  for (let c = 0; c < o.channels; c++) {
    const rng = mulberry32(hashString(`channel:${c}`) ^ o.seed);
    const channelId = `ch${c}`;
    const roster = castRoster(
      String(o.casts > 0 ? c % o.casts : c),
      o.pool,
      o.avatarsPerChannel + o.spares,
      o.seed,
    );
    const byId = new Map(roster.map((a) => [a.id, a]));
    const present = roster.slice(0, o.avatarsPerChannel).map((a) => a.id);
    const live = [...present];
    const absent = roster.slice(o.avatarsPerChannel).map((a) => a.id);
    const humans = Array.from({ length: 4 }, (_, k) => {
      const name = HUMANS[(c + k * 3) % HUMANS.length] as string;
      return { kind: 'human' as const, id: `u${c}.${k}`, name };
    });
    const inbound: Inbound[] = [];
    let at = START_AT + intIn(rng, 0, 20_000);
    for (let k = 0; k < o.perChannel; k++) {
      at += intIn(rng, 1_000, 20_000);
      const messageId = `${channelId}:h${k}`;
      const human = pick(rng, humans);
      const r = rng();
      if (r < 0.012 && live.length >= o.avatarsPerChannel && live.length > 2) {
        const idx = Math.floor(rng() * live.length);
        const avatarId = live[idx] as string;
        live.splice(idx, 1);
        absent.push(avatarId);
        inbound.push({ event: { type: 'dismiss', at, avatarId }, replyToLastAvatar: false });
        counts.dismissals++;
        continue;
      }
      if (r < 0.027 && absent.length > 0) {
        const idx = Math.floor(rng() * absent.length);
        const avatarId = absent[idx] as string;
        absent.splice(idx, 1);
        live.push(avatarId);
        inbound.push({
          event: { type: 'summon', at, avatarId, by: { id: human.id, name: human.name }, messageId },
          replyToLastAvatar: false,
        });
        counts.summons++;
        continue;
      }
      counts.humanMessages++;
      const q = rng();
      const topic = pick(rng, TOPICS);
      if (q < 0.3) {
        // Mentions one avatar (three times in four) or two; now and then an absent one.
        const targets: AvatarProfile[] = [];
        const n = rng() < 0.75 ? 1 : 2;
        for (let i = 0; i < n; i++) {
          const pool = rng() < 0.03 && absent.length > 0 ? absent : live;
          const a = byId.get(pick(rng, pool)) as AvatarProfile;
          if (!targets.includes(a)) targets.push(a);
        }
        const mentions: string[] = [];
        const first = address(rng, targets[0] as AvatarProfile, mentions);
        const second = targets[1] ? address(rng, targets[1], mentions) : undefined;
        const text = second
          ? pick(rng, [
              `hey ${first} and ${second}, any thoughts on ${topic}?`,
              `${first}, ${second}: settle this, is ${topic} overrated?`,
            ])
          : pick(rng, [
              `${first}, what do you think about ${topic}?`,
              `I asked ${first} about ${topic} yesterday, still curious`,
              `${first} can you explain ${topic} like I'm five`,
              `ok ${first}, your turn: ${topic}?`,
            ]);
        counts.mentioning++;
        if (mentions.length > 0) counts.platformMentions++;
        inbound.push({
          event: {
            type: 'message',
            at,
            messageId,
            author: human,
            text,
            ...(mentions.length > 0 ? { mentions } : {}),
          },
          replyToLastAvatar: false,
        });
      } else if (q < 0.45) {
        const text = pick(rng, [
          'haha fair point',
          'why do you say that?',
          `tell me more about ${topic}`,
          'hmm, not sure I agree',
        ]);
        counts.replies++;
        inbound.push({
          event: { type: 'message', at, messageId, author: human, text },
          replyToLastAvatar: true,
        });
      } else {
        const text = pick(rng, [
          `anyone here into ${topic}?`,
          'lol that is wild',
          'brb',
          `I've been reading about ${topic} and ${pick(rng, TOPICS)}`,
          'good morning everyone',
          `lunatic idea: more ${topic} on weekends`,
          `is it just me or is ${topic} everywhere lately`,
          'what did I miss?',
        ]);
        counts.unaddressed++;
        inbound.push({
          event: { type: 'message', at, messageId, author: human, text },
          replyToLastAvatar: false,
        });
      }
    }
    channels.push({ channelId, roster, present, inbound });
  }
  return { channels, counts };
}

/** How a claimed turn goes: generation latency, delivery latency, and whether it fails. */
export interface TurnTiming {
  /** Milliseconds from the claim to turn.generated, then from there to delivery (or failure). */
  generateMs: number;
  deliverMs: number;
  fails: boolean;
}

const timingOf = (rng: Rng): TurnTiming => ({
  generateMs: intIn(rng, 200, 1_500),
  deliverMs: intIn(rng, 300, 3_000),
  fails: rng() < 0.02,
});

/** The timing of a turn, seeded by its id (both floors see the same timing for the same turn). */
export const turnTiming = (seed: number, turnId: string): TurnTiming =>
  timingOf(mulberry32(hashString(turnId) ^ seed));

/** What an avatar says when its turn is delivered. */
export interface ScriptedTurn {
  text: string;
  mentions?: string[];
  replyTo?: { messageId: string; avatarId?: string };
}

/**
 * The scripted reply to a claimed turn, seeded by the turn id. Half the time (unless the turn is
 * closing) it addresses another present avatar, so bot-to-bot cascades and mention threads arise;
 * now and then it says goodbye (often when closing) or replies to the avatar it answers.
 */
export function scriptTurn(
  seed: number,
  claim: TurnClaim,
  present: readonly string[],
  roster: ReadonlyMap<string, AvatarProfile>,
): ScriptedTurn {
  const rng = mulberry32(hashString(claim.turnId) ^ seed);
  timingOf(rng); // the same draws as turnTiming, so the script does not depend on the timing
  const topic = pick(rng, TOPICS);
  const r = rng();
  const byAvatar = claim.context.addressedById;
  const replyTo =
    byAvatar !== undefined && roster.has(byAvatar) && claim.triggerMessageId !== undefined && rng() < 0.2
      ? { replyTo: { messageId: claim.triggerMessageId, avatarId: byAvatar } }
      : {};
  const closing = claim.context.closing;
  if (r < (closing ? 0.3 : 0.05)) return { ...replyTo, text: 'Gotta go, see you all later!' };
  const others = present.filter((id) => id !== claim.avatarId);
  if (!closing && r < 0.55 && others.length > 0) {
    const other = roster.get(pick(rng, others)) as AvatarProfile;
    if (rng() < 0.2)
      return { ...replyTo, text: `<@${other.id}> what's your view on ${topic}?`, mentions: [other.id] };
    const text = pick(rng, [
      `${other.name}, what's your view on ${topic}?`,
      `I agree, though ${other.name} knows more about ${topic} than I do.`,
    ]);
    return { ...replyTo, text };
  }
  return {
    ...replyTo,
    text: pick(rng, [
      `That's an interesting point about ${topic}.`,
      'I think so too.',
      'Let me think about that.',
    ]),
  };
}
