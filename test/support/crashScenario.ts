/**
 * What the crash test's child program and the test itself share: the avatars, channels and
 * timings the child runs with, the seeded script of inbound events it plays, and the shape of the
 * files it leaves behind for the test to check.
 */
import type { AvatarDefinitionInput } from '../../src/actors/avatarDefinition.js';
import type { PersistenceOptions } from '../../src/actors/runtimeOptions.js';
import type { CoordinationConfig } from '../../src/config/coordinationConfig.js';
import type { FloorEffect } from '../../src/floor/floorTypes.js';

/** The transport kind (and so the channel kind) of the crash test. */
export const CRASH_KIND = 'crash';

/** The channels the script talks in: two with residents, one that starts empty. */
export const CRASH_CHANNELS = ['lobby', 'den', 'attic'] as const;
export type CrashChannel = (typeof CRASH_CHANNELS)[number];

/** `kind:id` of a channel, as the runtime keys it. */
export function crashChannelKey(channel: string): string {
  return `${CRASH_KIND}:${channel}`;
}

export const CRASH_AVATARS: AvatarDefinitionInput[] = [
  {
    id: 'nova',
    name: 'Nova',
    persona: 'A dreamy astronomer who names comets.',
    topics: ['comets', 'telescopes'],
    residentIn: ['crash:lobby'],
  },
  {
    id: 'rex',
    name: 'Rex',
    persona: 'A retired tyrannosaurus with strong opinions.',
    topics: ['fossils', 'volcanoes'],
    residentIn: ['crash:lobby', 'crash:den'],
  },
  { id: 'ivy', name: 'Ivy', persona: 'A patient gardener.', topics: ['roses', 'compost'] },
  { id: 'otto', name: 'Otto', persona: 'A train enthusiast.', topics: ['railways', 'timetables'] },
];

/** Residents by channel key, as a fresh floor starts with them. */
export function residentsOf(channelKey: string): string[] {
  return CRASH_AVATARS.filter((a) => (a.residentIn ?? []).includes(channelKey)).map((a) => a.id);
}

/**
 * Short timings so a whole run takes a second or two. A mention grants no guaranteed turns
 * (`mentionGrantTurns: 0`): mentions are not visible as floor effects, so with grants the test
 * could not recompute a presence's summon turns from the effects alone.
 */
export const CRASH_CONFIG: Partial<CoordinationConfig> = {
  threadTtlMs: 700,
  threadQuietMs: 300,
  threadMaxTurns: 5,
  summonFollowUpDelayMs: 150,
  summonInitialTurns: 3,
  summonConversationDurationMs: 1_200,
  summonThreadTurns: 6,
  botMentionThreadTurns: 4,
  mentionGrantTurns: 0,
  perAvatarCooldownMs: 300,
  recentSummonCooldownMs: 100,
  stickyAffinityTtlMs: 400,
  attentionHalfLifeMs: 2_000,
  activeSpeakerWindowMs: 2_000,
};

/** The longest a thread can live without activity: what the child waits for at the end. */
export const LONGEST_TTL_MS = Math.max(
  CRASH_CONFIG.threadTtlMs ?? 0,
  CRASH_CONFIG.summonConversationDurationMs ?? 0,
);

/**
 * How the child persists, by seed: flushes every 20 to 200 ms (the longer, the more state a kill
 * loses), idle channels passivated after 400 ms and woken at their deadlines.
 */
export function crashPersistence(seed: number): PersistenceOptions {
  const random = prng(hash(`persistence:${seed}`));
  return { flushIntervalMs: pick(random, [20, 40, 100, 200]), passivateAfterMs: 400 };
}

/**
 * How long a restarted child waits before it plays the rest of the script (the gateway reconnects
 * late): deadlines that come meanwhile must be met by the runtime's own wake-ups.
 */
export function reconnectDelayMs(seed: number, run: number): number {
  if (run === 0) return 0;
  return pick(prng(hash(`reconnect:${seed}:${run}`)), [0, 0, 800, 2_000]);
}

/** Longest text one transport message carries: most replies go out in two or three parts. */
export const CRASH_MAX_TEXT = 40;

/** Files the child writes in its directory. */
export const CRASH_FILES = {
  db: 'troupe.db',
  cursor: 'script.cursor',
  /** One line per run: phase, start time, what it found in the store. */
  runs: 'runs.jsonl',
  /** One line per inbound event, written (resolved) before it is sent. */
  events: 'events.jsonl',
  /** One line per message the platform took (fsynced before the receipt is returned). */
  deliveries: 'deliveries.jsonl',
  /** One line per send attempt: accepted or duplicate. */
  attempts: 'attempts.jsonl',
  /** Floor effects and actor lifecycle, as they happen. */
  effects: 'effects.jsonl',
  errors: 'errors.jsonl',
  log: 'troupe.log',
  final: 'final.json',
} as const;

/** The field the child adds to every stored channel document (the runtime ignores it). */
export const MARKER_FIELD = 'crashMarker';

/**
 * Which effects a stored channel document reflects: every effect of run `run` with a sequence
 * number up to `seq` (and, through the document that run started from, those of earlier runs).
 */
export interface CrashMarker {
  run: number;
  seq: number;
}

/** A line of `runs.jsonl`. */
export interface RunLine {
  run: number;
  phase: 'play' | 'finish';
  /** Wall time when the runtime was created. */
  startedAt: number;
  /** The script cursor this run started from. */
  cursor: number;
  /** What the store held for each channel when the run started. */
  restored: {
    channelKey: string;
    marker: CrashMarker | null;
    epoch: string;
    inFlight: string[];
  }[];
  /** Outbox entries recorded but not settled when the run started. */
  unsettled: string[];
}

/** A line of `effects.jsonl`. */
export type EffectLine =
  | {
      run: number;
      phase: 'play' | 'finish';
      seq: number;
      wall: number;
      channelKey: string;
      kind: 'effect';
      effect: FloorEffect;
    }
  | {
      run: number;
      phase: 'play' | 'finish';
      seq: number;
      wall: number;
      channelKey: string;
      kind: 'actor';
      event: 'activated' | 'stopped';
      reason?: string;
    };

/** A line of `deliveries.jsonl`: one transport message the platform took. */
export interface DeliveryLine {
  run: number;
  key: string;
  messageId: string;
  channelId: string;
  speaker?: string;
  replyTo?: string;
  text: string;
  wall: number;
}

/** A line of `attempts.jsonl`. */
export interface AttemptLine {
  run: number;
  key: string;
  result: 'accepted' | 'duplicate';
  text: string;
  wall: number;
}

/** A line of `events.jsonl`: the event as sent, at its script index. */
export interface EventLine {
  run: number;
  index: number;
  event: ScriptedEvent;
  wall: number;
}

/** What `final.json` holds. */
export interface FinalFile {
  run: number;
  idle: boolean;
  waitedMs: number;
  channels: {
    channelKey: string;
    /** The floor's time when the view was taken (guaranteed turns are as of then). */
    now: number;
    present: { id: string; summonTurns: number }[];
    threads: { id: string; status: string; expiresAt: number }[];
    inFlight: string[];
    pendingFollowUps: number;
  }[];
}

// ---------------------------------------------------------------- seeded randomness

/** mulberry32: a small seeded generator; the same seed gives the same sequence. */
export function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** 32-bit FNV-1a of a string: a stable seed. */
export function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** A whole number in [min, max], from a generator. */
export function between(random: () => number, min: number, max: number): number {
  return min + Math.floor(random() * (max - min + 1));
}

function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)] as T;
}

// ---------------------------------------------------------------- the script

const USERS = [
  { id: 'u-ada', name: 'Ada' },
  { id: 'u-bo', name: 'Bo' },
  { id: 'u-cy', name: 'Cy' },
];

const QUESTIONS = ['what about {t}?', 'thoughts on {t}?', 'tell me about {t}.', 'is {t} overrated?'];
const AMBIENT = ['anyone around?', 'quiet evening, huh', 'I keep thinking about {t}', 'so, {t}?'];
const TOPICS = ['comets', 'fossils', 'roses', 'railways', 'compost', 'volcanoes', 'teapots'];

/** A human message, a summon or a dismiss; a reply names its target only when it is sent. */
export type ScriptedEvent =
  | {
      type: 'channel.message';
      channel: { kind: string; id: string };
      messageId: string;
      author: { kind: 'human'; id: string; name: string };
      text: string;
      /** Set when sent: the latest avatar message in the channel, if any. */
      replyTo?: { messageId: string; avatarId?: string };
    }
  | {
      type: 'avatar.summon';
      channel: { kind: string; id: string };
      avatarId: string;
      by: { id: string; name: string };
      messageId: string;
    }
  | { type: 'avatar.dismiss'; channel: { kind: string; id: string }; avatarId: string };

/** One step of the script: wait `gapMs`, then send `event` (a `reply` is resolved when sent). */
export interface ScriptStep {
  gapMs: number;
  /** Reply to the latest avatar message in the channel (falls back to the text as is). */
  reply: boolean;
  event: ScriptedEvent;
}

/**
 * The seeded script: 20 to 26 events over two to three seconds in three channels —
 * mentions of one or two avatars, unaddressed messages, replies to avatars, summons of the two
 * visitors and a dismiss — with the occasional longer pause so threads expire mid-script.
 */
export function crashScript(seed: number): ScriptStep[] {
  const random = prng(hash(`script:${seed}`));
  const steps: ScriptStep[] = [];
  const summoned = new Map<CrashChannel, Set<string>>(CRASH_CHANNELS.map((c) => [c, new Set<string>()]));
  const count = between(random, 20, 26);
  const name = (id: string) => CRASH_AVATARS.find((a) => a.id === id)?.name ?? id;
  for (let i = 0; i < count; i += 1) {
    const channelId = i === 0 ? 'attic' : pick(random, CRASH_CHANNELS);
    const channel = { kind: CRASH_KIND, id: channelId };
    const user = pick(random, USERS);
    const topic = pick(random, TOPICS);
    const gapMs = random() < 0.12 ? between(random, 300, 700) : between(random, 5, 100);
    const roll = i === 0 ? 0 : random();
    const visitors = summoned.get(channelId) as Set<string>;
    let event: ScriptedEvent;
    let reply = false;
    if (roll < 0.18) {
      const avatarId = pick(random, ['ivy', 'otto', ...(channelId === 'lobby' ? [] : ['nova'])]);
      visitors.add(avatarId);
      event = { type: 'avatar.summon', channel, avatarId, by: user, messageId: `s${i}` };
    } else if (roll < 0.24 && visitors.size > 0) {
      const avatarId = pick(random, [...visitors]);
      visitors.delete(avatarId);
      event = { type: 'avatar.dismiss', channel, avatarId };
    } else {
      let text: string;
      const kind = random();
      if (kind < 0.5) {
        const present = [...residentsOf(crashChannelKey(channelId)), ...visitors];
        const pool = present.length > 0 ? present : CRASH_AVATARS.map((a) => a.id);
        const first = pick(random, pool);
        const second = random() < 0.3 ? pick(random, pool) : first;
        const names = second === first ? name(first) : `${name(first)} and ${name(second)}`;
        text = `${names}, ${pick(random, QUESTIONS).replace('{t}', topic)}`;
      } else if (kind < 0.75) {
        reply = true;
        text = pick(random, ['really?', 'go on', 'ha, why?', 'I disagree', 'and then?']);
      } else {
        text = pick(random, AMBIENT).replace('{t}', topic);
      }
      event = {
        type: 'channel.message',
        channel,
        messageId: `h${i}`,
        author: { kind: 'human', id: user.id, name: user.name },
        text,
      };
    }
    steps.push({ gapMs, reply, event });
  }
  return steps;
}

// ---------------------------------------------------------------- reading the files

/** The complete lines of a JSON-lines file (a torn last line, cut by a kill, is left out). */
export function parseJsonLines<T>(text: string): T[] {
  const lines = text.split('\n');
  lines.pop(); // after the last "\n": empty, or a line the kill cut short
  return lines.filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as T);
}
