/**
 * Random channel traffic for property tests of the {@link ChannelFloor}, and a driver that plays
 * it in simulated time.
 *
 * A {@link Traffic} is plain data: a world (roster, residents, humans, config), a list of external
 * steps (human messages, avatars' own messages, summons, dismissals, joins, waits, bad input, each
 * with a time offset that may be negative: a late event) and a list of turn scripts. The driver
 * gives every claimed turn the next script in order: after the script's latency it delivers the
 * turn (with the script's text, mentions and reply), or fails or aborts it; and it sends `tick`
 * whenever {@link ChannelFloor.nextDeadline} comes due. Nothing sleeps; the same traffic always
 * produces the same event sequence, so a floor's output can be compared across replays.
 */

import fc from 'fast-check';
import { type CoordinationConfig, defaultCoordinationConfig } from '../../src/config/coordinationConfig.js';
import { ChannelFloor, type ChannelFloorOptions, type FloorView } from '../../src/floor/channelFloor.js';
import type { FloorEngineName } from '../../src/floor/floorEngine.js';
import type {
  Author,
  AvatarProfile,
  FloorEffect,
  FloorEvent,
  TurnClaim,
} from '../../src/floor/floorTypes.js';

// ------------------------------------------------------------------------------------------------
// Small helpers shared by the floor tests
// ------------------------------------------------------------------------------------------------

/** Effects of one type, narrowed. */
export function ofType<T extends FloorEffect['type']>(
  effects: readonly FloorEffect[],
  type: T,
): Extract<FloorEffect, { type: T }>[] {
  return effects.filter((e): e is Extract<FloorEffect, { type: T }> => e.type === type);
}

/** The turns claimed in a list of effects. */
export function claimsIn(effects: readonly FloorEffect[]): TurnClaim[] {
  return ofType(effects, 'turn.claimed').map((e) => e.turn);
}

// ------------------------------------------------------------------------------------------------
// The world
// ------------------------------------------------------------------------------------------------

/**
 * Avatars of the random world. Names are chosen so that none is a word, prefix or part of another
 * (the traffic's plain words never address anybody), and they cover a Unicode name, a multi-word
 * name, a name made of regex metacharacters, an emoji, an alias and a CJK name.
 */
export const trafficRoster: readonly AvatarProfile[] = [
  { id: 'luna', name: 'Luna', aliases: ['Moonie'], topics: ['astronomy', 'stars'] },
  { id: 'milo', name: 'Milo', emoji: '🎷', topics: ['jazz', 'music'] },
  { id: 'zoe', name: 'Zoë', topics: ['cinema'] },
  { id: 'tom', name: 'Old Tom', topics: ['boats', 'weather'] },
  { id: 'cpp', name: 'C++', topics: ['code'] },
  { id: 'sakura', name: 'さくら', topics: ['tea'] },
];

export const trafficHumans: readonly { id: string; name: string }[] = [
  { id: 'u-ann', name: 'Ann' },
  { id: 'u-bob', name: 'Bob' },
  { id: 'u-cy', name: 'Cy' },
];

/** An id no avatar has: platform mentions and summons of it must be ignored or rejected. */
export const ghostAvatarId = 'ghost';

/**
 * Ordinary words. Some are near misses of names ("lunar", "Lunatic", "Zoëtrope", "Mil", "C", and
 * "old" next to "Tommy" or "tomorrow"), some are topics, some look like farewells but are not
 * ("later", "go").
 */
export const plainWords: readonly string[] = [
  'hello',
  'what',
  'do',
  'you',
  'think',
  'about',
  'the',
  'tonight',
  'astronomy',
  'stars',
  'jazz',
  'music',
  'cinema',
  'boats',
  'weather',
  'code',
  'tea',
  'lunar',
  'Lunatic',
  'Zoëtrope',
  'Mil',
  'old',
  'Tommy',
  'tomorrow',
  'C',
  'later',
  'go',
  'well',
  '?',
  '!',
];

export const farewellPhrases: readonly string[] = ['goodbye', 'see you', 'gotta go', 'take care', 'bye'];

export type NameStyle = 'as-is' | 'lower' | 'upper' | 'at' | 'comma' | 'spaced' | 'alias' | 'emoji';

export type WordSpec =
  | { w: 'plain'; text: string }
  | { w: 'name'; avatar: number; style: NameStyle }
  | { w: 'farewell'; text: string };

export interface MessageSpec {
  words: WordSpec[];
  /** Platform mentions: avatar indices into {@link trafficRoster}, or -1 for an unknown id. */
  platformMentions: number[];
  /** Reply to a message: an index into the history so far (modulo), or -1 for the message a turn answers. */
  replyTo?: number | undefined;
}

export type TrafficStep =
  | { kind: 'human'; dt: number; human: number; msg: MessageSpec }
  | { kind: 'avatar'; dt: number; avatar: number; msg: MessageSpec }
  | { kind: 'summon'; dt: number; avatar: number; human: number; withMessageId: boolean }
  | { kind: 'dismiss'; dt: number; avatar: number }
  | { kind: 'join'; dt: number; avatar: number; present: boolean }
  | { kind: 'wait'; dt: number }
  | {
      kind: 'bogus';
      dt: number;
      what: 'unknown-turn' | 'replay-delivery' | 'ghost-summon' | 'ghost-message';
    };

export interface TurnScript {
  latency: number;
  generated: boolean;
  outcome: 'deliver' | 'fail' | 'abort';
  msg: MessageSpec;
}

export interface TrafficWorld {
  config: CoordinationConfig;
  /** Avatar indices present when the floor starts. */
  residents: number[];
}

export interface Traffic {
  world: TrafficWorld;
  steps: TrafficStep[];
  /** Scripts for claimed turns, used in order of claims (cyclically). Never empty. */
  turns: TurnScript[];
}

// ------------------------------------------------------------------------------------------------
// Arbitraries
// ------------------------------------------------------------------------------------------------

const avatarIndex = fc.integer({ min: 0, max: trafficRoster.length - 1 });

/** A coordination config with every knob within a sane range. */
export const configArb: fc.Arbitrary<CoordinationConfig> = fc
  .record({
    threadTtlMs: fc.integer({ min: 5_000, max: 300_000 }),
    threadMaxTurns: fc.integer({ min: 1, max: 8 }),
    threadExtendOnActivity: fc.boolean(),
    threadQuietMs: fc.integer({ min: 1_000, max: 60_000 }),
    threadActivityExtension: fc.oneof(
      fc.integer({ min: 1, max: 100 }).map((n): `${number}%` => `${n}%`),
      fc.integer({ min: 1_000, max: 300_000 }),
    ),
    threadBackoffBaseMs: fc.constantFrom(0, 1_000, 10_000, 30_000),
    summonSecondFollowUpMs: fc.constantFrom(0, 2_000, 8_000),
    threadBackoffWindowMs: fc.integer({ min: 10_000, max: 900_000 }),
    summonProactiveEnabled: fc.boolean(),
    summonFollowUpDelayMs: fc.integer({ min: 0, max: 10_000 }),
    summonInitialTurns: fc.integer({ min: 0, max: 6 }),
    summonConversationDurationMs: fc.integer({ min: 10_000, max: 600_000 }),
    summonThreadTurns: fc.integer({ min: 1, max: 10 }),
    botCascadeLimit: fc.integer({ min: 0, max: 5 }),
    botMentionCreateThread: fc.boolean(),
    botMentionThreadTurns: fc.integer({ min: 1, max: 8 }),
    mentionGrantTurns: fc.integer({ min: 0, max: 3 }),
    threadResponsePriority: fc.constantFrom('high' as const, 'normal' as const, 'low' as const),
    threadOverrideCooldown: fc.boolean(),
    perAvatarCooldownMs: fc.integer({ min: 0, max: 180_000 }),
    recentSummonCooldownMs: fc.integer({ min: 0, max: 60_000 }),
    stickyAffinityTtlMs: fc.integer({ min: 0, max: 120_000 }),
    maxResponsesPerMessage: fc.integer({ min: 1, max: 4 }),
    attentionHalfLifeMs: fc.integer({ min: 1_000, max: 600_000 }),
    activeSpeakerWindowMs: fc.integer({ min: 1_000, max: 900_000 }),
    initiativeThreshold: fc.double({ min: 0, max: 1, noNaN: true }),
  })
  .map((knobs) => ({ ...defaultCoordinationConfig, ...knobs }));

const nameStyle = fc.constantFrom<NameStyle>(
  'as-is',
  'lower',
  'upper',
  'at',
  'comma',
  'spaced',
  'alias',
  'emoji',
);

const wordArb: fc.Arbitrary<WordSpec> = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...plainWords).map((text) => ({ w: 'plain' as const, text })) },
  {
    weight: 3,
    arbitrary: fc.record({ w: fc.constant('name' as const), avatar: avatarIndex, style: nameStyle }),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(...farewellPhrases).map((text) => ({ w: 'farewell' as const, text })),
  },
);

const messageArb = (replyWeight: number): fc.Arbitrary<MessageSpec> =>
  fc.record(
    {
      words: fc.array(wordArb, { minLength: 1, maxLength: 6 }),
      platformMentions: fc.oneof(
        { weight: 4, arbitrary: fc.constant<number[]>([]) },
        {
          weight: 1,
          arbitrary: fc.array(fc.integer({ min: -1, max: trafficRoster.length - 1 }), { maxLength: 3 }),
        },
      ),
      replyTo: fc.oneof(
        { weight: 10 - replyWeight, arbitrary: fc.constant(undefined) },
        { weight: replyWeight, arbitrary: fc.integer({ min: -1, max: 40 }) },
      ),
    },
    { requiredKeys: ['words', 'platformMentions'] },
  );

/** Offsets between steps: mostly seconds, sometimes minutes, sometimes a late (earlier) timestamp. */
const dtArb = fc.oneof(
  { weight: 8, arbitrary: fc.integer({ min: 0, max: 30_000 }) },
  { weight: 2, arbitrary: fc.integer({ min: 30_000, max: 400_000 }) },
  { weight: 1, arbitrary: fc.integer({ min: -20_000, max: -1 }) },
);

const stepArb: fc.Arbitrary<TrafficStep> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record({
      kind: fc.constant('human' as const),
      dt: dtArb,
      human: fc.integer({ min: 0, max: trafficHumans.length - 1 }),
      msg: messageArb(3),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('avatar' as const),
      dt: dtArb,
      avatar: avatarIndex,
      msg: messageArb(3),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('summon' as const),
      dt: dtArb,
      avatar: avatarIndex,
      human: fc.integer({ min: 0, max: trafficHumans.length - 1 }),
      withMessageId: fc.boolean(),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('dismiss' as const), dt: dtArb, avatar: avatarIndex }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('join' as const),
      dt: dtArb,
      avatar: avatarIndex,
      present: fc.boolean(),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('wait' as const), dt: dtArb }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('bogus' as const),
      dt: dtArb,
      what: fc.constantFrom(
        'unknown-turn' as const,
        'replay-delivery' as const,
        'ghost-summon' as const,
        'ghost-message' as const,
      ),
    }),
  },
);

const turnScriptArb: fc.Arbitrary<TurnScript> = fc.record({
  latency: fc.oneof(
    { weight: 8, arbitrary: fc.integer({ min: 0, max: 8_000 }) },
    { weight: 1, arbitrary: fc.integer({ min: 8_000, max: 120_000 }) },
  ),
  generated: fc.boolean(),
  outcome: fc.oneof(
    { weight: 7, arbitrary: fc.constant('deliver' as const) },
    { weight: 2, arbitrary: fc.constant('fail' as const) },
    { weight: 1, arbitrary: fc.constant('abort' as const) },
  ),
  msg: messageArb(4),
});

/** Random traffic: a world, up to `maxSteps` external steps and a set of turn scripts. */
export function trafficArb(options: { maxSteps?: number; config?: fc.Arbitrary<CoordinationConfig> } = {}) {
  return fc.record({
    world: fc.record({
      config: options.config ?? configArb,
      residents: fc.subarray(
        trafficRoster.map((_, i) => i),
        { minLength: 2 },
      ),
    }),
    steps: fc.array(stepArb, {
      minLength: Math.min(10, options.maxSteps ?? 40),
      maxLength: options.maxSteps ?? 40,
    }),
    turns: fc.array(turnScriptArb, { minLength: 1, maxLength: 12 }),
  }) satisfies fc.Arbitrary<Traffic>;
}

// ------------------------------------------------------------------------------------------------
// Rendering messages
// ------------------------------------------------------------------------------------------------

function renderName(avatar: AvatarProfile, style: NameStyle): string {
  switch (style) {
    case 'as-is':
      return avatar.name;
    case 'lower':
      return avatar.name.toLowerCase();
    case 'upper':
      return avatar.name.toUpperCase();
    case 'at':
      return `@${avatar.name}`;
    case 'comma':
      return `${avatar.name},`;
    case 'spaced':
      return avatar.name.replace(/ /g, '   ');
    case 'alias':
      return avatar.aliases?.[0] ?? avatar.name;
    case 'emoji':
      return avatar.emoji ?? avatar.name;
  }
}

/** The text of a message, and the avatars its words name. */
export function renderWords(words: readonly WordSpec[]): { text: string; named: string[] } {
  const parts: string[] = [];
  const named: string[] = [];
  for (const word of words) {
    if (word.w === 'name') {
      const avatar = trafficRoster[word.avatar] as AvatarProfile;
      parts.push(renderName(avatar, word.style));
      named.push(avatar.id);
    } else {
      parts.push(word.text);
    }
  }
  return { text: parts.join(' '), named };
}

const platformIds = (indices: readonly number[]) =>
  indices.map((i) => (i < 0 ? ghostAvatarId : (trafficRoster[i] as AvatarProfile).id));

// ------------------------------------------------------------------------------------------------
// The driver
// ------------------------------------------------------------------------------------------------

/** A message the driver put on the floor (a human's, an avatar's own, or a delivered turn). */
export interface SentUtterance {
  messageId: string;
  author: { kind: 'human' | 'avatar'; id: string };
  /** Avatar ids the message names, mentions on the platform or replies to (author included, unfiltered). */
  addressedIds: string[];
}

/** One event the driver sent, what it returned, and what the driver knew just before. */
export interface LogEntry {
  event: FloorEvent;
  effects: FloorEffect[];
  /** Avatar ids present just before the event. */
  presentBefore: string[];
  /** The floor as it was just before the event. */
  viewBefore: FloorView;
  utterance?: SentUtterance;
}

export interface Recording {
  floor: ChannelFloor;
  log: LogEntry[];
  /** Every effect, in order. */
  effects: FloorEffect[];
  /** Author of every message id the driver used. */
  authors: Map<string, { kind: 'human' | 'avatar'; id: string }>;
  /** Every claim, by turn id. */
  claims: Map<string, TurnClaim>;
}

export class DriverStuckError extends Error {}

interface Pending {
  at: number;
  seq: number;
  event: FloorEvent;
  utterance?: SentUtterance;
}

const CHANNEL = 'ch';

/**
 * Plays a {@link Traffic} against a fresh floor, one external step at a time ({@link step}), so
 * two drivers can be interleaved. `observe` sees every event right after the floor handled it.
 */
export class FloorDriver {
  readonly floor: ChannelFloor;
  readonly recording: Recording;
  private now = 0;
  private seq = 0;
  private stepIndex = 0;
  private claimCount = 0;
  private messageCount = 0;
  private readonly pending: Pending[] = [];
  private readonly history: string[] = [];
  private lastDelivery: FloorEvent | undefined;

  constructor(
    private readonly traffic: Traffic,
    private readonly observe?: (entry: LogEntry, floor: ChannelFloor) => void,
    engine: FloorEngineName = 'compiled',
    makeFloor: (options: ChannelFloorOptions) => ChannelFloor = (options) => new ChannelFloor(options),
  ) {
    this.floor = makeFloor({
      engine,
      channelId: CHANNEL,
      config: traffic.world.config,
      roster: [...trafficRoster],
      present: traffic.world.residents.map((i) => (trafficRoster[i] as AvatarProfile).id),
      at: 0,
    });
    this.recording = { floor: this.floor, log: [], effects: [], authors: new Map(), claims: new Map() };
  }

  /** True while external steps remain. */
  get hasSteps(): boolean {
    return this.stepIndex < this.traffic.steps.length;
  }

  /** Plays the next external step (after everything due before it). */
  step(): void {
    const step = this.traffic.steps[this.stepIndex++];
    if (!step) return;
    const at = this.now + step.dt;
    this.drainUntil(Math.max(this.now, at));
    switch (step.kind) {
      case 'human': {
        const human = trafficHumans[step.human] as { id: string; name: string };
        const messageId = `h${++this.messageCount}`;
        this.sendMessage(at, messageId, { kind: 'human', id: human.id, name: human.name }, step.msg);
        break;
      }
      case 'avatar': {
        const avatar = trafficRoster[step.avatar] as AvatarProfile;
        const messageId = `a${++this.messageCount}`;
        this.sendMessage(at, messageId, { kind: 'avatar', id: avatar.id }, step.msg);
        break;
      }
      case 'summon': {
        const human = trafficHumans[step.human] as { id: string; name: string };
        const avatar = trafficRoster[step.avatar] as AvatarProfile;
        const messageId = step.withMessageId ? `s${++this.messageCount}` : undefined;
        if (messageId) this.recording.authors.set(messageId, { kind: 'human', id: human.id });
        this.send({
          type: 'summon',
          at,
          avatarId: avatar.id,
          by: human,
          ...(messageId ? { messageId } : {}),
        });
        break;
      }
      case 'dismiss':
        this.send({ type: 'dismiss', at, avatarId: (trafficRoster[step.avatar] as AvatarProfile).id });
        break;
      case 'join': {
        const avatar = trafficRoster[step.avatar] as AvatarProfile;
        this.send({ type: 'avatar.join', at, avatar, present: step.present });
        break;
      }
      case 'wait':
        this.send({ type: 'tick', at });
        break;
      case 'bogus':
        switch (step.what) {
          case 'unknown-turn':
            this.send({ type: 'turn.failed', at, turnId: `${CHANNEL}:t999999`, reason: 'bogus' });
            break;
          case 'replay-delivery':
            this.send(
              this.lastDelivery
                ? { ...this.lastDelivery, at }
                : { type: 'turn.generated', at, turnId: 'nope' },
            );
            break;
          case 'ghost-summon':
            this.send({
              type: 'summon',
              at,
              avatarId: ghostAvatarId,
              by: trafficHumans[0] as { id: string; name: string },
            });
            break;
          case 'ghost-message':
            this.send({
              type: 'message',
              at,
              messageId: `g${++this.messageCount}`,
              author: { kind: 'avatar', id: ghostAvatarId },
              text: 'hello Luna',
            });
            break;
        }
        break;
    }
  }

  /** Lets everything still pending happen: outcomes of claimed turns, follow-ups, thread ends. */
  finish(): Recording {
    while (this.hasSteps) this.step();
    this.drainUntil(Number.POSITIVE_INFINITY);
    return this.recording;
  }

  private sendMessage(at: number, messageId: string, author: Author, msg: MessageSpec): void {
    const { text, named } = renderWords(msg.words);
    const mentions = platformIds(msg.platformMentions);
    const replyTo = this.replyTarget(msg.replyTo, undefined);
    const utterance: SentUtterance = {
      messageId,
      author: { kind: author.kind, id: author.id },
      addressedIds: [...mentions, ...(replyTo?.avatarId ? [replyTo.avatarId] : []), ...named],
    };
    this.recording.authors.set(messageId, utterance.author);
    this.send(
      {
        type: 'message',
        at,
        messageId,
        author,
        text,
        ...(mentions.length > 0 ? { mentions } : {}),
        ...(replyTo ? { replyTo } : {}),
      },
      utterance,
    );
    this.history.push(messageId);
  }

  private replyTarget(
    index: number | undefined,
    trigger: string | undefined,
  ): { messageId: string; avatarId?: string } | undefined {
    if (index === undefined) return undefined;
    const messageId = index < 0 ? trigger : this.history[index % Math.max(1, this.history.length)];
    if (messageId === undefined) return undefined;
    const author = this.recording.authors.get(messageId);
    return { messageId, ...(author?.kind === 'avatar' ? { avatarId: author.id } : {}) };
  }

  private send(event: FloorEvent, utterance?: SentUtterance): FloorEffect[] {
    const viewBefore = this.floor.view();
    const presentBefore = viewBefore.present.map((p) => p.id);
    const effects = this.floor.handle(event);
    this.now = Math.max(this.now, event.at);
    const entry: LogEntry = {
      event,
      effects,
      presentBefore,
      viewBefore,
      ...(utterance ? { utterance } : {}),
    };
    this.recording.log.push(entry);
    this.recording.effects.push(...effects);
    for (const effect of effects) if (effect.type === 'turn.claimed') this.schedule(effect.turn);
    this.observe?.(entry, this.floor);
    return effects;
  }

  private schedule(claim: TurnClaim): void {
    this.recording.claims.set(claim.turnId, claim);
    const script = this.traffic.turns[this.claimCount++ % this.traffic.turns.length] as TurnScript;
    const done = claim.claimedAt + script.latency;
    if (script.generated) {
      this.enqueue(claim.claimedAt + Math.floor(script.latency / 2), {
        type: 'turn.generated',
        at: 0,
        turnId: claim.turnId,
      });
    }
    if (script.outcome === 'deliver') {
      const { text, named } = renderWords(script.msg.words);
      const mentions = platformIds(script.msg.platformMentions);
      const replyTo = this.replyTarget(script.msg.replyTo, claim.triggerMessageId);
      const messageId = `${claim.turnId}/m`;
      this.recording.authors.set(messageId, { kind: 'avatar', id: claim.avatarId });
      this.enqueue(
        done,
        {
          type: 'turn.delivered',
          at: 0,
          turnId: claim.turnId,
          messageId,
          text,
          ...(mentions.length > 0 ? { mentions } : {}),
          ...(replyTo ? { replyTo } : {}),
        },
        {
          messageId,
          author: { kind: 'avatar', id: claim.avatarId },
          addressedIds: [...mentions, ...(replyTo?.avatarId ? [replyTo.avatarId] : []), ...named],
        },
      );
    } else {
      const type = script.outcome === 'fail' ? 'turn.failed' : 'turn.aborted';
      this.enqueue(done, { type, at: 0, turnId: claim.turnId, reason: `scripted ${script.outcome}` });
    }
  }

  private enqueue(at: number, event: FloorEvent, utterance?: SentUtterance): void {
    this.pending.push({ at, seq: this.seq++, event: { ...event, at }, ...(utterance ? { utterance } : {}) });
  }

  /** Sends every pending outcome and every due tick up to `until`, in time order. */
  private drainUntil(until: number): void {
    for (let guard = 0; ; guard++) {
      if (guard > 100_000) throw new DriverStuckError('driver did not settle after 100000 events');
      let next: Pending | undefined;
      let nextIndex = -1;
      this.pending.forEach((p, i) => {
        if (p.at <= until && (!next || p.at < next.at || (p.at === next.at && p.seq < next.seq))) {
          next = p;
          nextIndex = i;
        }
      });
      const deadline = this.floor.nextDeadline();
      const tickDue = deadline !== undefined && deadline <= until;
      if (next && (!tickDue || next.at <= (deadline as number))) {
        this.pending.splice(nextIndex, 1);
        if (next.event.type === 'turn.delivered') {
          this.lastDelivery = next.event;
          if (next.utterance) this.history.push(next.utterance.messageId);
        }
        this.send(next.event, next.utterance);
        continue;
      }
      if (!tickDue) return;
      const at = deadline as number;
      this.send({ type: 'tick', at });
      const after = this.floor.nextDeadline();
      if (after !== undefined && after <= at) {
        throw new DriverStuckError(
          `nextDeadline() is still ${after} after a tick at ${at}: the tick changed nothing`,
        );
      }
    }
  }
}

/** Plays a whole traffic against a fresh floor. */
export function playTraffic(
  traffic: Traffic,
  observe?: (entry: LogEntry, floor: ChannelFloor) => void,
  engine: FloorEngineName = 'compiled',
): Recording {
  return new FloorDriver(traffic, observe, engine).finish();
}
