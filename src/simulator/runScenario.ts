import { SimulatedClock } from '../actors/clock.js';
import { scriptedReply } from '../adapters/llm/scriptedReplies.js';
import { type CoordinationConfig, defaultCoordinationConfig } from '../config/coordinationConfig.js';
import { ChannelFloor, type ChannelFloorOptions, type FloorView } from '../machines/channelFloor.js';
import { type DrivenFloor, FloorDriver } from '../machines/floorDriver.js';
import type {
  AvatarProfile,
  BudgetLane,
  FloorEffect,
  FloorEvent,
  Rung,
  SuppressionReason,
  ThreadMode,
  ThreadOutcome,
  TurnClaim,
  TurnKind,
} from '../machines/floorTypes.js';
import { type Scenario, type ScenarioFailure, type ScriptStep, scenarioConfigOverrides } from './scenario.js';
import { buildSummary, type SimulationSummary } from './summary.js';

/** The part of a channel floor the simulator drives (a real {@link ChannelFloor} by default). */
export interface FloorLike extends DrivenFloor {
  view(): Pick<FloorView, 'inFlight'>;
}

/** How {@link runScenario} runs. */
export interface RunScenarioOptions {
  /** Base coordination config; the scenario's `config` overrides are laid over it. Default: the defaults. */
  config?: CoordinationConfig;
  /** Epoch ms of simulated time zero. Default 2025-11-13T12:00:00Z. */
  startAt?: number;
  /** Hard cap on processed events, so a run always ends. Default 20 000. */
  maxEvents?: number;
  /** Hard cap on simulated time past the end of the script. Default 24h. */
  maxOvertimeMs?: number;
  /** Builds the floor; for tests of the driver itself. */
  createFloor?: (options: ChannelFloorOptions) => FloorLike;
}

interface EntryBase {
  /** Simulated milliseconds since the start. */
  t: number;
}

/** A person's message. */
export interface HumanMessageEntry extends EntryBase {
  type: 'human';
  messageId: string;
  authorId: string;
  name: string;
  text: string;
  mentions?: string[];
  replyTo?: { messageId: string; avatarId?: string };
}

/** An avatar's message: a delivered turn (`source: 'offline'`) or a scripted line (`'script'`). */
export interface AvatarMessageEntry extends EntryBase {
  type: 'avatar';
  messageId: string;
  avatarId: string;
  name: string;
  emoji?: string;
  text: string;
  mentions?: string[];
  replyTo?: { messageId: string; avatarId?: string };
  source: 'offline' | 'script';
  /** Guaranteed (summon) turns the avatar holds after this message, when it spent one. */
  summonTurnsLeft?: number;
  /** For delivered turns: the claim that allowed the message. */
  turnId?: string;
  kind?: TurnKind;
  rung?: Rung;
  reason?: string;
  lane?: BudgetLane;
  threadId?: string;
  anchorMessageId?: string;
  triggerMessageId?: string;
  /** Who the turn answered (an avatar or human id). */
  addressedById?: string;
  farewell?: boolean;
}

/** Every kind of transcript line. Suppressed candidates and claims print only with `verbose`. */
export type TranscriptEntry =
  | HumanMessageEntry
  | AvatarMessageEntry
  | (EntryBase & {
      type: 'summon';
      avatarId: string;
      name: string;
      byId?: string;
      byName?: string;
      messageId?: string;
      turnsGranted: number;
    })
  | (EntryBase & { type: 'dismiss'; avatarId: string; name: string })
  | (EntryBase & { type: 'join'; avatarId: string; name: string })
  | (EntryBase & {
      type: 'thread.opened';
      threadId: string;
      mode: ThreadMode;
      participants: string[];
      maxTurns: number;
      /** Simulated ms since the start. */
      expiresAt: number;
    })
  | (EntryBase & {
      type: 'thread.ended';
      threadId: string;
      outcome: ThreadOutcome;
      detail: string;
      turns: number;
      /** Mean sentiment per turn, when any turn was scored. */
      sentiment?: number;
    })
  | (EntryBase & {
      type: 'claim';
      turnId: string;
      avatarId: string;
      kind: TurnKind;
      rung: Rung;
      reason: string;
      lane: BudgetLane;
      threadId?: string;
      anchorMessageId: string;
      triggerMessageId?: string;
    })
  | (EntryBase & {
      type: 'suppressed';
      avatarId: string;
      messageId: string;
      rung?: Rung;
      reason: SuppressionReason;
      /** The reason in words (a score against its threshold), where there is one. */
      detail?: string;
    })
  | (EntryBase & {
      type: 'turn.failed';
      turnId: string;
      avatarId: string;
      stage: ScenarioFailure['stage'];
      reason: string;
    })
  | (EntryBase & { type: 'turn.released'; turnId: string; avatarId: string; reason: string })
  | (EntryBase & { type: 'rejected'; event: FloorEvent['type']; code: string; message: string })
  | (EntryBase & { type: 'note'; message: string })
  | (EntryBase & { type: 'narration'; text: string });

/** The outcome of a simulation: every transcript line, the summary, and the config used. */
export interface SimulationResult {
  scenario: Scenario;
  config: CoordinationConfig;
  /** Epoch ms of simulated time zero. */
  startAt: number;
  transcript: TranscriptEntry[];
  summary: SimulationSummary;
}

/** 2025-11-13T12:00:00Z: the default start of simulated time. */
export const DEFAULT_START_AT = Date.UTC(2025, 10, 13, 12, 0, 0);

/**
 * Runs a scenario against one {@link ChannelFloor} in simulated time. Script steps become floor
 * events at their times; each claimed turn is answered by the offline scripted model after
 * `generationLatency` (`turn.generated`, then `turn.delivered` with the reply, or `turn.failed` for
 * a scripted failure); a `tick` is sent at every `nextDeadline()`. After the script, it runs until
 * no turn is in flight and no deadline is pending, or a hard cap is hit. Nothing sleeps, nothing is
 * random: the same scenario gives the same result.
 */
export function runScenario(scenario: Scenario, options: RunScenarioOptions = {}): SimulationResult {
  const config: CoordinationConfig = {
    ...(options.config ?? defaultCoordinationConfig),
    ...scenarioConfigOverrides(scenario),
  };
  const start = options.startAt ?? DEFAULT_START_AT;
  const maxEvents = options.maxEvents ?? 20_000;
  const maxOvertimeMs = options.maxOvertimeMs ?? 24 * 3_600_000;
  const clock = new SimulatedClock(start);

  const roster: AvatarProfile[] = scenario.avatars.map(({ present: _present, ...profile }) => profile);
  const avatarsById = new Map(scenario.avatars.map((a) => [a.id, a]));
  const humansById = new Map(scenario.humans.map((h) => [h.id, h]));
  const avatarNames = scenario.avatars.flatMap((a) => [a.name, ...(a.aliases ?? [])]);
  const floorOptions: ChannelFloorOptions = {
    channelId: scenario.channel,
    config,
    roster,
    present: scenario.avatars.filter((a) => a.present).map((a) => a.id),
    at: start,
  };
  const floor = options.createFloor ? options.createFloor(floorOptions) : new ChannelFloor(floorOptions);

  const transcript: TranscriptEntry[] = [];
  const rel = (at: number) => at - start;
  const note = (message: string) => transcript.push({ t: rel(clock.now()), type: 'note', message });

  // Message bookkeeping, for `replyTo` references and message ids.
  let messageSeq = 0;
  const nextMessageId = () => `m${++messageSeq}`;
  let lastMessage: { messageId: string; avatarId?: string } | undefined;
  const lastBy = new Map<string, { messageId: string; avatarId?: string }>();
  const labels = new Map<string, { messageId: string; avatarId?: string }>();
  const remember = (messageId: string, author: { human?: string; avatar?: string }, label?: string) => {
    const ref = author.avatar !== undefined ? { messageId, avatarId: author.avatar } : { messageId };
    lastMessage = ref;
    lastBy.set(author.avatar ?? author.human ?? '', ref);
    if (label !== undefined) labels.set(label, ref);
  };

  // Turn bookkeeping.
  const claimsPerAvatar = new Map<string, number>();
  const released = new Set<string>();
  const pendingSummoner = new Map<string, { id: string; name: string; messageId: string }>();
  let processed = 0;
  let truncated: string | undefined;

  const record = (effect: FloorEffect, event: FloorEvent) => {
    const t = rel(effect.at);
    switch (effect.type) {
      case 'turn.claimed': {
        const c = effect.turn;
        transcript.push({
          t,
          type: 'claim',
          avatarId: c.avatarId,
          ...claimFields(c),
        });
        break;
      }
      case 'turn.consumed': {
        // The avatar message entry stands for it; it learns the guaranteed turns left.
        if (effect.summonTurnsLeft === undefined) break;
        for (let i = transcript.length - 1; i >= 0; i--) {
          const entry = transcript[i];
          if (entry?.type === 'avatar' && entry.turnId === effect.turnId) {
            entry.summonTurnsLeft = effect.summonTurnsLeft;
            break;
          }
        }
        break;
      }
      case 'turn.released':
        released.add(effect.turnId);
        transcript.push({
          t,
          type: 'turn.released',
          turnId: effect.turnId,
          avatarId: effect.avatarId,
          reason: effect.reason,
        });
        break;
      case 'candidate.suppressed':
        transcript.push({
          t,
          type: 'suppressed',
          avatarId: effect.avatarId,
          messageId: effect.messageId,
          ...(effect.rung !== undefined ? { rung: effect.rung } : {}),
          reason: effect.reason,
          ...(effect.detail !== undefined ? { detail: effect.detail } : {}),
        });
        break;
      case 'thread.opened': {
        transcript.push({
          t,
          type: 'thread.opened',
          threadId: effect.threadId,
          mode: effect.mode,
          participants: effect.participants,
          maxTurns: effect.maxTurns,
          expiresAt: rel(effect.expiresAt),
        });
        break;
      }
      case 'thread.ended':
        transcript.push({
          t,
          type: 'thread.ended',
          threadId: effect.threadId,
          outcome: effect.outcome,
          detail: effect.detail,
          turns: effect.turns,
          ...(effect.sentiment !== undefined ? { sentiment: effect.sentiment } : {}),
        });
        break;
      case 'presence.summoned': {
        const by = pendingSummoner.get(effect.avatarId);
        pendingSummoner.delete(effect.avatarId);
        transcript.push({
          t,
          type: 'summon',
          avatarId: effect.avatarId,
          name: avatarsById.get(effect.avatarId)?.name ?? effect.avatarId,
          ...(by ? { byId: by.id, byName: by.name, messageId: by.messageId } : {}),
          turnsGranted: effect.turnsGranted,
        });
        break;
      }
      case 'presence.dismissed':
        transcript.push({
          t,
          type: 'dismiss',
          avatarId: effect.avatarId,
          name: avatarsById.get(effect.avatarId)?.name ?? effect.avatarId,
        });
        break;
      case 'event.rejected':
        transcript.push({
          t,
          type: 'rejected',
          event: event.type,
          code: effect.code,
          message: effect.message,
        });
        break;
    }
  };

  // ---- the floor's effects go to the transcript and claimed turns are played, through the one
  // driver every floor has (it also keeps a tick armed at the floor's next deadline).
  const driver = new FloorDriver({
    floor,
    clock,
    hooks: {
      onEffect: record,
      onClaim: (turn) => scheduleTurn(turn),
      onStuckDeadline: (at) => note(`the floor's deadline stayed at ${rel(at)}ms after three ticks`),
    },
  });
  const apply = (event: FloorEvent): FloorEffect[] => driver.apply(event);

  // ---- claimed turns: generate after the latency, then deliver (or fail as scripted).
  const scheduleTurn = (claim: TurnClaim) => {
    const nth = (claimsPerAvatar.get(claim.avatarId) ?? 0) + 1;
    claimsPerAvatar.set(claim.avatarId, nth);
    const failure = scenario.failures.find((f) => f.avatar === claim.avatarId && f.nth === nth);
    clock.setTimer(claim.claimedAt + scenario.generationLatency, () => {
      // The floor may have released the claim meanwhile (for example on dismiss).
      if (released.has(claim.turnId)) return;
      const at = clock.now();
      const fail = (f: ScenarioFailure) => {
        const reason = f.reason ?? `scripted ${f.stage} failure`;
        transcript.push({
          t: rel(at),
          type: 'turn.failed',
          turnId: claim.turnId,
          avatarId: claim.avatarId,
          stage: f.stage,
          reason,
        });
        apply({ type: 'turn.failed', at, turnId: claim.turnId, reason });
      };
      if (failure?.stage === 'generation') return fail(failure);
      apply({ type: 'turn.generated', at, turnId: claim.turnId });
      if (released.has(claim.turnId)) return;
      if (failure) return fail(failure);
      deliver(claim, at);
    });
  };

  const deliver = (claim: TurnClaim, at: number) => {
    const avatar = avatarsById.get(claim.avatarId);
    const profile: AvatarProfile = avatar ?? { id: claim.avatarId, name: claim.avatarId };
    const spoken = claim.threadId !== undefined ? driver.spokenInThread(claim.threadId, claim.avatarId) : 0;
    const reply = scriptedReply({
      turn: claim,
      avatar: profile,
      isAvatar: (id) => avatarsById.has(id),
      greetingMaxChars: claim.context.maxChars ?? config.greetingMaxChars,
      spokenInThread: spoken,
      avatarNames,
    });
    const messageId = nextMessageId();
    transcript.push({
      t: rel(at),
      type: 'avatar',
      messageId,
      avatarId: claim.avatarId,
      name: profile.name,
      ...(profile.emoji !== undefined ? { emoji: profile.emoji } : {}),
      text: reply.text,
      ...(reply.mentions.length > 0 ? { mentions: reply.mentions } : {}),
      source: 'offline',
      ...claimFields(claim),
      ...(claim.context.addressedById !== undefined ? { addressedById: claim.context.addressedById } : {}),
      farewell: reply.farewell,
    });
    remember(messageId, { avatar: claim.avatarId });
    apply({
      type: 'turn.delivered',
      at,
      turnId: claim.turnId,
      messageId,
      text: reply.text,
      ...(reply.mentions.length > 0 ? { mentions: reply.mentions } : {}),
    });
  };

  // ---- the script: each step is scheduled when the previous one runs, at its own time.
  const resolveReplyTo = (ref: string | undefined): { messageId: string; avatarId?: string } | undefined => {
    if (ref === undefined) return undefined;
    const found =
      ref === 'last' ? lastMessage : ref.startsWith('last:') ? lastBy.get(ref.slice(5)) : labels.get(ref);
    if (!found) note(`replyTo "${ref}" found no message yet; sent as a plain message`);
    return found;
  };

  const runStep = (step: ScriptStep) => {
    const at = clock.now();
    if ('summon' in step) {
      const human = humansById.get(step.by);
      const messageId = nextMessageId();
      pendingSummoner.set(step.summon, { id: step.by, name: human?.name ?? step.by, messageId });
      apply({
        type: 'summon',
        at,
        avatarId: step.summon,
        by: { id: step.by, name: human?.name ?? step.by },
        messageId,
      });
      pendingSummoner.delete(step.summon);
    } else if ('dismiss' in step) {
      apply({ type: 'dismiss', at, avatarId: step.dismiss });
    } else if ('narrate' in step) {
      transcript.push({ t: rel(at), type: 'narration', text: step.narrate });
    } else if ('join' in step) {
      const avatar = roster.find((a) => a.id === step.join);
      if (!avatar) return;
      transcript.push({ t: rel(at), type: 'join', avatarId: avatar.id, name: avatar.name });
      apply({ type: 'avatar.join', at, avatar, present: true });
    } else if ('human' in step) {
      const human = humansById.get(step.human);
      const name = human?.name ?? step.human;
      const messageId = nextMessageId();
      const replyTo = resolveReplyTo(step.replyTo);
      transcript.push({
        t: rel(at),
        type: 'human',
        messageId,
        authorId: step.human,
        name,
        text: step.say,
        ...(step.mentions ? { mentions: step.mentions } : {}),
        ...(replyTo ? { replyTo } : {}),
      });
      remember(messageId, { human: step.human }, step.label);
      apply({
        type: 'message',
        at,
        messageId,
        author: { kind: 'human', id: step.human, name },
        text: step.say,
        ...(step.mentions ? { mentions: step.mentions } : {}),
        ...(replyTo ? { replyTo } : {}),
      });
    } else if ('avatar' in step) {
      const avatar = avatarsById.get(step.avatar);
      const messageId = nextMessageId();
      const replyTo = resolveReplyTo(step.replyTo);
      transcript.push({
        t: rel(at),
        type: 'avatar',
        messageId,
        avatarId: step.avatar,
        name: avatar?.name ?? step.avatar,
        ...(avatar?.emoji !== undefined ? { emoji: avatar.emoji } : {}),
        text: step.say,
        ...(step.mentions ? { mentions: step.mentions } : {}),
        ...(replyTo ? { replyTo } : {}),
        source: 'script',
      });
      remember(messageId, { avatar: step.avatar }, step.label);
      apply({
        type: 'message',
        at,
        messageId,
        author: { kind: 'avatar', id: step.avatar },
        text: step.say,
        ...(step.mentions ? { mentions: step.mentions } : {}),
        ...(replyTo ? { replyTo } : {}),
      });
    }
  };

  let cursor = start;
  let stepIndex = 0;
  let scriptEnd = start;
  let scriptDone = false;
  const scheduleNextStep = () => {
    while (stepIndex < scenario.script.length) {
      const step = scenario.script[stepIndex] as ScriptStep;
      stepIndex += 1;
      if ('wait' in step) {
        cursor += step.wait;
        continue;
      }
      cursor = step.at !== undefined ? Math.max(cursor, start + step.at) : cursor + (step.after ?? 0);
      clock.setTimer(cursor, () => {
        runStep(step);
        scheduleNextStep();
      });
      return;
    }
    // Trailing waits still let time pass, even when nothing else is scheduled.
    scriptEnd = cursor;
    scriptDone = true;
    if (cursor > clock.now()) clock.setTimer(cursor, () => {});
  };
  scheduleNextStep();

  // ---- the loop: earliest timer first, ties in scheduling order.
  let lastEventAt = start;
  while (clock.pending > 0) {
    const due = clock.nextDue() ?? start;
    if (processed >= maxEvents) {
      truncated = `stopped after ${maxEvents} events`;
      break;
    }
    if (scriptDone && due > scriptEnd + maxOvertimeMs) {
      truncated = `stopped ${maxOvertimeMs}ms after the script ended`;
      break;
    }
    clock.fireNext();
    processed += 1;
    lastEventAt = clock.now();
  }
  if (truncated) note(`simulation ${truncated}; the floor still had work pending`);
  else {
    const left = floor.view().inFlight.length;
    if (left > 0)
      note(`the floor reports ${left} turn(s) still in flight with nothing scheduled to settle them`);
  }

  return {
    scenario,
    config,
    startAt: start,
    transcript,
    summary: buildSummary({
      scenario,
      transcript,
      durationMs: rel(lastEventAt),
      eventsProcessed: processed,
      ...(truncated ? { truncated } : {}),
    }),
  };
}

/** The parts of a claim a transcript entry repeats: which turn, chosen how, in which thread. */
function claimFields(c: TurnClaim) {
  return {
    turnId: c.turnId,
    kind: c.kind,
    rung: c.rung,
    reason: c.reason,
    lane: c.lane,
    ...(c.threadId !== undefined ? { threadId: c.threadId } : {}),
    anchorMessageId: c.anchorMessageId,
    ...(c.triggerMessageId !== undefined ? { triggerMessageId: c.triggerMessageId } : {}),
  };
}
