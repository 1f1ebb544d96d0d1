/**
 * Realistic values for the store benchmark, made by the real code rather than written by hand: channel
 * documents are snapshots of real {@link ChannelFloor}s that ran a short conversation (a human
 * mentions an avatar, whose answer mentions another, which opens a mention thread), with their
 * `spoken` counts kept the way the channel actor keeps them. Ids, times and casts vary per channel
 * (seeded), so no two documents are the same text.
 */
import {
  type AvatarDefinitionInput,
  avatarListSchema,
  toProfile,
} from '../../src/actors/avatarDefinition.js';
import { nameKey } from '../../src/actors/avatarNames.js';
import type { ChannelDocument } from '../../src/actors/channelPersistence.js';
import type { CoordinationConfig } from '../../src/config/coordinationConfig.js';
import { ChannelFloor } from '../../src/floor/channelFloor.js';
import type { AvatarProfile, FloorEvent, TurnClaim } from '../../src/floor/floorTypes.js';
import type { OutgoingResponse } from '../../src/ports/outgoingResponse.js';
import { hashString, intIn, mulberry32, pick, type Rng } from './prng.js';
import { avatarPool } from './traffic.js';

/** The channel kind of every benchmark channel (a channel's key is `bench:<id>`). */
export const STORE_KIND = 'bench';
/** Presences per stored channel. */
export const PRESENCES_PER_CHANNEL = 4;

/** The avatars of the runtime (definitions, as an app passes them) and the floor's view of them. */
export interface Cast {
  definitions: AvatarDefinitionInput[];
  /** What the runtime gives every floor: all avatars, in order (as `createRuntime` builds it). */
  roster: AvatarProfile[];
}

/**
 * The runtime's cast: the coordination benchmark's avatar pool as definitions. That pool draws
 * emojis from a short list, so some avatars share one; the runtime refuses a cast where two
 * avatars answer to the same emoji (a mention would be ambiguous), so a later avatar whose emoji
 * is taken goes without one (it is still addressed by name).
 */
export function storeCast(size: number, seed: number): Cast {
  const taken = new Set<string>();
  const uniqueEmoji = (emoji: string | undefined) => {
    if (emoji === undefined || taken.has(nameKey(emoji))) return {};
    taken.add(nameKey(emoji));
    return { emoji };
  };
  const definitions: AvatarDefinitionInput[] = avatarPool(size, seed).map((a) => ({
    id: a.id,
    name: a.name,
    ...uniqueEmoji(a.emoji),
    ...(a.persona !== undefined ? { persona: a.persona } : {}),
    ...(a.topics !== undefined ? { topics: a.topics } : {}),
  }));
  return { definitions, roster: avatarListSchema.parse(definitions).map(toProfile) };
}

/** The channel id and key of channel number `c` (zero-padded, so key order is number order). */
export const channelIdOf = (c: number) => `c${String(c).padStart(7, '0')}`;
export const channelKeyOf = (c: number) => `${STORE_KIND}:${channelIdOf(c)}`;

/** How far a channel's conversation goes before its snapshot is taken. */
export type ChannelStage =
  /** Right after the first answer: a mention thread open and the next turn claimed (in flight). */
  | 'claimed'
  /** Every claimed turn delivered; the thread still open (written by a flush while active). */
  | 'open'
  /** As `open`, then a tick after the thread's TTL: what a channel passivated when idle holds. */
  | 'passivated';

export interface StoredChannel {
  key: string;
  document: ChannelDocument;
  /** The floor's next deadline, if any (the runtime stores it in `wakeups`). */
  wakeAt: number | undefined;
  presences: number;
}

const HUMANS = ['alice', 'bob', 'carmen', 'deshawn', 'eun-ji', 'farid', 'gwen', 'hiro', 'ines', 'jomo'];
const TOPICS = ['jazz', 'chess', 'coffee', 'gardening', 'astronomy', 'poetry', 'sailing', 'history'];

/** Distinct avatars for one channel. */
function pickPresent(rng: Rng, roster: readonly AvatarProfile[], count: number): AvatarProfile[] {
  const chosen = new Map<string, AvatarProfile>();
  while (chosen.size < count) {
    const a = pick(rng, roster);
    chosen.set(a.id, a);
  }
  return [...chosen.values()];
}

/**
 * Channel `c` as the runtime would have stored it: a floor (channel id = the runtime's key) with
 * four avatars present, run through a short conversation and snapshotted at `stage`. The
 * conversation starts 35-45 s before `endAt` and lasts about 20 s (`passivated` then ticks once more,
 * after the thread's TTL).
 */
export function storedChannel(
  c: number,
  cast: Cast,
  config: CoordinationConfig,
  seed: number,
  stage: ChannelStage,
  endAt: number,
): StoredChannel {
  const rng = mulberry32(hashString(`store:${c}`) ^ seed);
  const key = channelKeyOf(c);
  const present = pickPresent(rng, cast.roster, PRESENCES_PER_CHANNEL);
  const [first, second] = present as [AvatarProfile, AvatarProfile];
  let at = endAt - 45_000 + intIn(rng, 0, 10_000);
  const floor = new ChannelFloor({
    channelId: key,
    config,
    roster: present,
    present: present.map((a) => a.id),
    at,
    epoch: ((rng() * 0xffffffff) >>> 0).toString(16).padStart(8, '0'),
  });
  const spoken = new Map<string, number>();
  const credit = (threadId: string, avatarId: string) => {
    const k = `${threadId}\u0000${avatarId}`;
    spoken.set(k, (spoken.get(k) ?? 0) + 1);
  };
  let delivering: string | undefined;
  const queue: TurnClaim[] = [];
  const apply = (event: FloorEvent) => {
    const effects = floor.handle(event);
    for (const e of effects) {
      if (e.type === 'turn.claimed') queue.push(e.turn);
      else if (e.type === 'thread.opened' && event.type === 'turn.delivered' && delivering)
        credit(e.threadId, delivering);
      else if (e.type === 'turn.consumed' && e.threadId !== undefined) credit(e.threadId, e.avatarId);
    }
    return effects;
  };

  const human = { kind: 'human' as const, id: `u${c % 9_973}`, name: pick(rng, HUMANS) };
  const topic = pick(rng, TOPICS);
  const byPlatform = rng() < 0.3;
  apply({
    type: 'message',
    at,
    messageId: `${key}:m1`,
    author: human,
    text: byPlatform
      ? `<@${first.id}> what do you think about ${topic}?`
      : `${first.name}, what about ${topic}?`,
    ...(byPlatform ? { mentions: [first.id] } : {}),
  });
  // Turns are generated and delivered in order; the first answer mentions the second avatar.
  for (let k = 0; queue.length > 0 && k < 8; k++) {
    const claim = queue.shift() as TurnClaim;
    at += intIn(rng, 300, 1_500);
    apply({ type: 'turn.generated', at, turnId: claim.turnId });
    at += intIn(rng, 300, 3_000);
    const mention = k === 0 && claim.avatarId === first.id;
    delivering = claim.avatarId;
    apply({
      type: 'turn.delivered',
      at,
      turnId: claim.turnId,
      messageId: `${key}:a${k}`,
      text: mention
        ? `<@${second.id}> what's your view on ${topic}?`
        : `That's an interesting point about ${topic}.`,
      ...(mention ? { mentions: [second.id] } : {}),
    });
    delivering = undefined;
    if (stage === 'claimed' && queue.length > 0) break;
  }
  if (stage !== 'claimed') {
    for (const claim of queue.splice(0)) {
      at += 100;
      apply({ type: 'turn.aborted', at, turnId: claim.turnId, reason: 'benchmark' });
    }
  }
  if (stage === 'passivated') {
    at += config.threadTtlMs + config.threadQuietMs + 1_000;
    apply({ type: 'tick', at });
  }
  const snapshot = floor.snapshot();
  const spokenList: [string, string, number][] = [];
  for (const [k, n] of spoken) {
    const [threadId = '', avatarId = ''] = k.split('\u0000');
    spokenList.push([threadId, avatarId, n]);
  }
  return {
    key,
    document: { floor: snapshot, spoken: spokenList },
    wakeAt: snapshot.inFlight.length > 0 ? snapshot.now : floor.nextDeadline(),
    presences: snapshot.presences.length,
  };
}

/** A prepared answer as the outbox records it (about the size of a short chat reply). */
export function outgoingResponse(i: number, cast: Cast): OutgoingResponse {
  const avatar = cast.roster[i % cast.roster.length] as AvatarProfile;
  const channel = channelIdOf(i % 1_000);
  return {
    idempotencyKey: `${STORE_KIND}:${channel}:e${(i * 2_654_435_761) >>> 0}:t${i}`,
    channel: { kind: STORE_KIND, id: channel },
    speaker: {
      avatarId: avatar.id,
      name: avatar.name,
      ...(avatar.emoji !== undefined ? { emoji: avatar.emoji } : {}),
    },
    text: `That's an interesting point about ${TOPICS[i % TOPICS.length]}. I was reading about it only yesterday, and honestly the more I learn the less I seem to know; what got you into it?`,
    attachments: [],
    replyTo: { messageId: `${STORE_KIND}:${channel}:m${i}` },
    origin: { kind: 'answer', turnId: `${STORE_KIND}:${channel}:t${i}`, avatarId: avatar.id },
    preparedAt: 1_763_035_200_000 + i,
  };
}

/** An event-log record: what the runtime might log for a delivered turn. */
export function loggedEvent(i: number): Record<string, unknown> {
  return {
    type: 'turn.delivered',
    channelKey: channelKeyOf(i % 1_000),
    turnId: `t${i}`,
    avatarId: `av${i % 100}`,
    rung: 'mention',
    lane: 'main',
    chars: 140 + (i % 60),
    parts: 1,
  };
}

/** A memory value: an assistant preference, learned and rewritten now and then. */
export function memoryValue(i: number): Record<string, unknown> {
  return {
    rule: 'newsletters from this sender go to Later',
    sender: `news${i % 500}@example.com`,
    confidence: 0.5 + (i % 50) / 100,
    examples: [`msg-${i}`, `msg-${i + 1}`, `msg-${i + 2}`],
  };
}
