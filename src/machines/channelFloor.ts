import type { CoordinationConfig } from '../config/coordinationConfig.js';
import { attentionAt } from './attention.js';
import {
  type AvatarPresenceContext,
  type AvatarPresenceEvent,
  hasAffinity,
  type PresenceSettings,
} from './avatarPresence.machine.js';
import type { MachineState } from './compiledMachine.js';
import {
  type ConversationThreadContext,
  type ConversationThreadEvent,
  threadDeadline,
} from './conversationThread.machine.js';
import { isFarewell } from './farewell.js';
import { type FloorEngine, type FloorEngineName, floorEngine } from './floorEngine.js';
import {
  FLOOR_SNAPSHOT_FORMAT,
  FLOOR_SNAPSHOT_VERSION,
  type FloorSnapshot,
  FloorSnapshotError,
  floorSnapshotSchema,
} from './floorSnapshot.js';
import type {
  Author,
  AvatarProfile,
  BudgetLane,
  FloorEffect,
  FloorEvent,
  Rung,
  SuppressionReason,
  ThreadMode,
  ThreadOutcome,
  TurnClaim,
  TurnContext,
  TurnKind,
} from './floorTypes.js';
import { initiativeScore, wordsOf } from './initiative.js';
import { createMentionMatcher, type MentionMatcher } from './mentionMatcher.js';
import { rungRanks } from './rungOrder.js';

type PresenceSnapshot = MachineState<AvatarPresenceContext>;
type ThreadSnapshot = MachineState<ConversationThreadContext>;

/** How a channel floor is created. */
export interface ChannelFloorOptions {
  channelId: string;
  config: CoordinationConfig;
  /**
   * Every avatar the channel knows (for mention matching); `present` says who is in the room.
   * Treated as immutable: floors given the same array share its lookup maps and mention matcher.
   */
  roster: readonly AvatarProfile[];
  /** Avatar ids present when the floor starts (residents). */
  present?: string[];
  /** Start time; defaults to 0 and moves forward with events. */
  at?: number;
  /**
   * How presences and threads are stepped: `compiled` (default) runs the machines' own
   * transitions, guards and assigns as plain functions; `xstate` steps real xstate snapshots.
   * Both decide identically (tested); `xstate` is there to check that and to inspect with xstate.
   */
  engine?: FloorEngineName;
  /**
   * Names this floor's lifetime (turn ids restart with a fresh floor; idempotency keys combine
   * both). Kept across snapshots. Default `"0"`.
   */
  epoch?: string;
}

/** A read-only picture of a floor, for transcripts, inspection and tests. */
export interface FloorView {
  channelId: string;
  now: number;
  present: {
    id: string;
    name: string;
    summonTurns: number;
    conversing: boolean;
    cooldownUntil: number;
    lastSpokeAt: number | null;
    turn: 'ready' | 'claimed' | 'generating';
  }[];
  threads: {
    id: string;
    mode: ThreadMode;
    participants: string[];
    turnCount: number;
    maxTurns: number;
    expiresAt: number;
    lastSpeakerId?: string;
    status: 'active' | ThreadOutcome;
    detail?: string;
  }[];
  inFlight: TurnClaim[];
  budget: { anchorMessageId?: string; main: number; cascade: number };
  pendingFollowUps: { avatarId: string; dueAt: number }[];
}

interface Budget {
  anchorMessageId: string | undefined;
  main: number;
  cascade: number;
}

interface PendingFollowUp {
  avatarId: string;
  dueAt: number;
  anchorMessageId: string;
  summonerName: string;
}

interface Candidate {
  avatarId: string;
  rung: Rung;
  reason: string;
  /** Position among addressed avatars, then roster order: deterministic tie-breaking. */
  order: number;
}

interface Utterance {
  at: number;
  messageId: string;
  author: Author;
  text: string;
  mentions?: readonly string[];
  replyTo?: { messageId: string; avatarId?: string };
  /** The thread the utterance was spoken in, when it was an avatar's turn in one. */
  threadId?: string;
  /** A greeting: it invites answers only from those it addresses (the follow-up comes next). */
  announcement?: boolean;
}

type ClaimSpec = Parameters<ChannelFloor['claim']>[0];

/** An answer owed by an avatar that was addressed while busy; claimed once it is free. */
interface DeferredAnswer {
  spec: ClaimSpec;
  messageId: string;
}

/** A roster's lookup maps and mention matcher, built once per roster array. */
interface SharedRoster {
  roster: Map<string, AvatarProfile>;
  order: Map<string, number>;
  matcher: MentionMatcher;
}

const sharedRosters = new WeakMap<readonly AvatarProfile[], SharedRoster>();

function sharedRosterOf(profiles: readonly AvatarProfile[]): SharedRoster {
  let shared = sharedRosters.get(profiles);
  if (!shared) {
    const roster = new Map<string, AvatarProfile>();
    for (const avatar of profiles) roster.set(avatar.id, avatar);
    shared = {
      roster,
      order: new Map([...roster.keys()].map((id, i) => [id, i])),
      matcher: createMentionMatcher([...roster.values()]),
    };
    sharedRosters.set(profiles, shared);
  }
  return shared;
}

/**
 * The channel floor (seed 003): for every message it decides which avatars answer, by the
 * response ladder, and records the rung and reason of each decision and why other candidates were
 * suppressed. It owns the channel's presences and threads as machine snapshots (data, not running
 * actors) and steps only the ones an event touches.
 *
 * Budgets are anchored to the latest human message: `MAX_RESPONSES_PER_MESSAGE` answers to it
 * (main lane) and `BOT_MENTION_CASCADE_LIMIT` answers to avatars' messages after it (cascade
 * lane). An avatar's message never opens a budget, so bot-to-bot loops cannot happen.
 *
 * A turn is claimed, then generated, then delivered (consumed); a failed or aborted turn releases
 * its claim and gives its budget back. Deterministic and free of I/O: time comes only from
 * `event.at`, and the driver sends `tick` at {@link ChannelFloor.nextDeadline}.
 */
export class ChannelFloor {
  readonly channelId: string;
  private readonly config: CoordinationConfig;
  private readonly settings: PresenceSettings;
  private readonly ranks: ReadonlyMap<Rung, number>;
  private roster: Map<string, AvatarProfile>;
  private rosterOrder: Map<string, number>;
  /** True while `roster`, `rosterOrder` and `matcher` are shared with other floors (copy on write). */
  private sharedRoster: boolean;
  private matcher: MentionMatcher;
  private readonly engine: FloorEngine;
  private readonly presences = new Map<string, PresenceSnapshot>();
  private readonly threads = new Map<string, ThreadSnapshot>();
  /** Threads that ended, kept briefly so late deliveries are recognised (bounded). */
  private readonly endedThreads = new Map<string, ThreadOutcome>();
  private readonly inFlight = new Map<string, TurnClaim>();
  private readonly threadReservations = new Map<string, number>();
  private readonly followUps: PendingFollowUp[] = [];
  private readonly deferred = new Map<string, DeferredAnswer>();
  private readonly pendingGreetings = new Map<string, ClaimSpec>();
  private budget: Budget = { anchorMessageId: undefined, main: 0, cascade: 0 };
  private now: number;
  private turnSeq = 0;
  private threadSeq = 0;
  /** See {@link ChannelFloorOptions.epoch}. */
  readonly epoch: string;

  constructor(options: ChannelFloorOptions) {
    this.channelId = options.channelId;
    this.epoch = options.epoch ?? '0';
    this.config = options.config;
    this.now = options.at ?? 0;
    this.engine = floorEngine(options.engine ?? 'compiled');
    this.settings = {
      perAvatarCooldownMs: options.config.perAvatarCooldownMs,
      recentSummonCooldownMs: options.config.recentSummonCooldownMs,
      stickyAffinityTtlMs: options.config.stickyAffinityTtlMs,
      attentionHalfLifeMs: options.config.attentionHalfLifeMs,
      summonConversationDurationMs: options.config.summonConversationDurationMs,
    };
    this.ranks = rungRanks(options.config.threadResponsePriority);
    // Floors built from the same roster array share its maps and mention matcher: a runtime with
    // thousands of channels builds them once, not per channel (restores and heap both gain).
    const shared = sharedRosterOf(options.roster);
    this.roster = shared.roster;
    this.rosterOrder = shared.order;
    this.matcher = shared.matcher;
    this.sharedRoster = true;
    for (const id of options.present ?? []) if (this.roster.has(id)) this.ensurePresence(id, this.now);
  }

  /** Applies one event and returns its effects, in order. Never throws for bad input. */
  handle(event: FloorEvent): FloorEffect[] {
    const effects: FloorEffect[] = [];
    // Time never runs backwards: a late event is treated as happening now.
    const at = Math.max(this.now, event.at);
    this.advance(at, effects);
    switch (event.type) {
      case 'message':
        if (event.author.kind === 'avatar' && !this.presences.has(event.author.id)) {
          effects.push(
            this.reject(
              at,
              'AVATAR_NOT_PRESENT',
              `Avatar ${event.author.id} is not present in ${this.channelId}; summon it first.`,
            ),
          );
          break;
        }
        this.onUtterance(event.at === at ? event : { ...event, at }, effects);
        break;
      case 'summon':
        this.onSummon(at, event.avatarId, event.by, event.messageId, effects);
        break;
      case 'dismiss':
        this.onDismiss(at, event.avatarId, effects);
        break;
      case 'avatar.join':
        if (this.sharedRoster) {
          this.roster = new Map(this.roster);
          this.sharedRoster = false;
        }
        this.roster.set(event.avatar.id, event.avatar);
        this.matcher = this.rebuildMatcher();
        if (event.present ?? true) this.ensurePresence(event.avatar.id, at);
        break;
      case 'tick':
        break;
      case 'turn.generated': {
        const claim = this.inFlight.get(event.turnId);
        if (!claim) effects.push(this.unknownTurn(at, event.turnId));
        else this.stepPresence(claim.avatarId, { type: 'presence.generated', at, turnId: claim.turnId });
        break;
      }
      case 'turn.delivered':
        this.onDelivered(event.at === at ? event : { ...event, at }, effects);
        break;
      case 'turn.failed':
      case 'turn.aborted':
        this.onReleased(
          at,
          event.turnId,
          `${event.type === 'turn.failed' ? 'failed' : 'aborted'}: ${event.reason}`,
          effects,
        );
        break;
    }
    return effects;
  }

  /** Earliest time at which a `tick` would change something, or undefined when nothing is due. */
  nextDeadline(): number | undefined {
    let next: number | undefined;
    for (const snap of this.threads.values()) {
      const d = threadDeadline(snap.context);
      if (next === undefined || d < next) next = d;
    }
    for (const f of this.followUps) {
      if (this.presenceTurnState(f.avatarId) !== 'ready') continue; // waits for the claim to settle
      if (next === undefined || f.dueAt < next) next = f.dueAt;
    }
    return next === undefined ? undefined : Math.max(next, this.now);
  }

  /**
   * The whole floor as plain JSON, for a store. Restore it with {@link ChannelFloor.restore}.
   * Roster and configuration are not included: they come from the runtime on restore.
   */
  snapshot(): FloorSnapshot {
    const state = (snap: { value: unknown; context: unknown }) => ({
      value: snap.value as string | Record<string, unknown>,
      context: snap.context as Record<string, unknown>,
    });
    return structuredClone({
      format: FLOOR_SNAPSHOT_FORMAT,
      version: FLOOR_SNAPSHOT_VERSION,
      channelId: this.channelId,
      epoch: this.epoch,
      now: this.now,
      turnSeq: this.turnSeq,
      threadSeq: this.threadSeq,
      presences: [...this.presences].map(
        ([id, snap]) => [id, state(snap)] as [string, ReturnType<typeof state>],
      ),
      threads: [...this.threads].map(([id, snap]) => [id, state(snap)] as [string, ReturnType<typeof state>]),
      endedThreads: [...this.endedThreads],
      inFlight: [...this.inFlight.values()] as unknown as Record<string, unknown>[],
      threadReservations: [...this.threadReservations],
      followUps: this.followUps.map((f) => ({ ...f })),
      deferred: [...this.deferred].map(
        ([id, d]) =>
          [id, { spec: d.spec as unknown as Record<string, unknown>, messageId: d.messageId }] as [
            string,
            { spec: Record<string, unknown>; messageId: string },
          ],
      ),
      pendingGreetings: [...this.pendingGreetings].map(
        ([id, spec]) => [id, spec as unknown as Record<string, unknown>] as [string, Record<string, unknown>],
      ),
      budget: {
        ...(this.budget.anchorMessageId !== undefined
          ? { anchorMessageId: this.budget.anchorMessageId }
          : {}),
        main: this.budget.main,
        cascade: this.budget.cascade,
      },
    });
  }

  /**
   * A floor from a {@link ChannelFloor.snapshot}, with today's roster and configuration. Avatars no
   * longer in the roster are dropped with their turns. Presence settings follow the current
   * configuration.
   * @throws FloorSnapshotError (`TROUPE_SNAPSHOT_INVALID`) for a foreign, newer or damaged snapshot.
   */
  static restore(
    snapshot: unknown,
    options: Omit<ChannelFloorOptions, 'present' | 'at' | 'epoch'>,
  ): ChannelFloor {
    const parsed = floorSnapshotSchema.safeParse(snapshot);
    if (!parsed.success) {
      const format = (snapshot as { format?: unknown } | null)?.format;
      const version = (snapshot as { version?: unknown } | null)?.version;
      const reason =
        format !== FLOOR_SNAPSHOT_FORMAT
          ? 'not a Troupe channel floor'
          : version !== FLOOR_SNAPSHOT_VERSION
            ? `snapshot version ${String(version)}, this Troupe reads ${FLOOR_SNAPSHOT_VERSION}`
            : parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
      throw new FloorSnapshotError(options.channelId, reason);
    }
    const data = parsed.data;
    if (data.channelId !== options.channelId)
      throw new FloorSnapshotError(options.channelId, `it belongs to channel ${data.channelId}`);
    const floor = new ChannelFloor({ ...options, at: data.now, epoch: data.epoch });
    const known = (id: string) => floor.roster.has(id);
    try {
      floor.turnSeq = data.turnSeq;
      floor.threadSeq = data.threadSeq;
      for (const [id, st] of data.presences) {
        if (!known(id)) continue;
        const context = { ...(st.context as unknown as AvatarPresenceContext), settings: floor.settings };
        floor.presences.set(id, floor.engine.presence.restore(st.value as never, context));
      }
      for (const [id, st] of data.threads)
        floor.threads.set(
          id,
          floor.engine.thread.restore(st.value as never, st.context as unknown as ConversationThreadContext),
        );
      for (const [id, outcome] of data.endedThreads) floor.endedThreads.set(id, outcome);
      for (const claim of data.inFlight as unknown as TurnClaim[])
        if (known(claim.avatarId)) floor.inFlight.set(claim.turnId, claim);
      for (const [id, n] of data.threadReservations) floor.threadReservations.set(id, n);
      for (const f of data.followUps) if (known(f.avatarId)) floor.followUps.push({ ...f });
      for (const [id, d] of data.deferred)
        if (known(id))
          floor.deferred.set(id, { spec: d.spec as unknown as ClaimSpec, messageId: d.messageId });
      for (const [id, spec] of data.pendingGreetings)
        if (known(id)) floor.pendingGreetings.set(id, spec as unknown as ClaimSpec);
      floor.budget = {
        anchorMessageId: data.budget.anchorMessageId,
        main: data.budget.main,
        cascade: data.budget.cascade,
      };
    } catch (error) {
      throw new FloorSnapshotError(options.channelId, error instanceof Error ? error.message : String(error));
    }
    return floor;
  }

  /** A read-only picture of the floor. */
  view(): FloorView {
    return {
      channelId: this.channelId,
      now: this.now,
      present: [...this.presences.entries()].map(([id, snap]) => ({
        id,
        name: this.nameOf(id),
        summonTurns: snap.context.summonTurns,
        conversing: this.now < snap.context.conversingUntil,
        cooldownUntil: snap.context.cooldownUntil,
        lastSpokeAt: snap.context.lastSpokeAt,
        turn: this.presenceTurnState(id) ?? 'ready',
      })),
      threads: [...this.threads.values()].map((snap) => {
        const c = snap.context;
        return {
          id: c.id,
          mode: c.mode,
          participants: [...c.participants],
          turnCount: c.turnCount,
          maxTurns: c.maxTurns,
          expiresAt: c.expiresAt,
          ...(c.lastSpeakerId ? { lastSpeakerId: c.lastSpeakerId } : {}),
          status: snap.status === 'done' ? (snap.value as ThreadOutcome) : 'active',
          ...(c.detail ? { detail: c.detail } : {}),
        };
      }),
      inFlight: [...this.inFlight.values()],
      budget: {
        ...(this.budget.anchorMessageId ? { anchorMessageId: this.budget.anchorMessageId } : {}),
        main: this.budget.main,
        cascade: this.budget.cascade,
      },
      pendingFollowUps: this.followUps.map((f) => ({ avatarId: f.avatarId, dueAt: f.dueAt })),
    };
  }

  // ---------------------------------------------------------------- time

  private advance(at: number, effects: FloorEffect[]): void {
    // Threads end at their own deadline, not at the (possibly later) moment we notice.
    for (const [id, snap] of this.threads) {
      const deadline = threadDeadline(snap.context);
      if (deadline <= at)
        this.stepThread(id, { type: 'thread.tick', at: Math.max(deadline, snap.context.now) }, effects);
    }
    this.now = at;
    this.fireDueFollowUps(effects);
  }

  private fireDueFollowUps(effects: FloorEffect[]): void {
    for (let i = 0; i < this.followUps.length; ) {
      const f = this.followUps[i] as PendingFollowUp;
      if (f.dueAt > this.now || this.presenceTurnState(f.avatarId) !== 'ready') {
        i++;
        continue;
      }
      this.followUps.splice(i, 1); // once: removed before claiming, whatever happens next
      if (!this.presences.has(f.avatarId)) continue;
      const thread = this.latestThreadWith(f.avatarId);
      this.claim(
        {
          avatarId: f.avatarId,
          kind: 'follow-up',
          rung: 'follow-up',
          reason: `${this.nameOf(f.avatarId)} follows up on arriving, summoned by ${f.summonerName}`,
          lane: 'scheduled',
          anchorMessageId: f.anchorMessageId,
          threadId: thread?.context.id,
        },
        effects,
      );
    }
  }

  // ---------------------------------------------------------------- summon and dismiss

  private onSummon(
    at: number,
    avatarId: string,
    by: { id: string; name: string },
    messageId: string | undefined,
    effects: FloorEffect[],
  ): void {
    if (!this.roster.has(avatarId)) {
      effects.push(
        this.reject(
          at,
          'AVATAR_UNKNOWN',
          `Cannot summon ${avatarId}: no avatar with that id is known in ${this.channelId}.`,
        ),
      );
      return;
    }
    const others = [...this.presences.keys()].filter((id) => id !== avatarId);
    this.ensurePresence(avatarId, at);
    this.stepPresence(avatarId, { type: 'presence.summoned', at, turns: this.config.summonInitialTurns });
    effects.push({ type: 'presence.summoned', at, avatarId, turnsGranted: this.config.summonInitialTurns });
    // Summoning is a human act: it anchors a fresh budget for the conversation it starts.
    const anchorMessageId = messageId ?? `${this.channelId}:summon${this.turnSeq + 1}`;
    this.openBudget(anchorMessageId);
    let threadId: string | undefined;
    // A re-summon keeps the summon thread the avatar is already in rather than opening another.
    const current = this.latestThreadWith(avatarId);
    if (current?.context.mode === 'summon') threadId = current.context.id;
    else if (others.length > 0) {
      threadId = this.openThread(
        'summon',
        [avatarId, ...others],
        this.config.summonThreadTurns,
        this.config.summonConversationDurationMs,
        at,
        effects,
      );
    }
    const greeting: ClaimSpec = {
      avatarId,
      kind: 'greeting',
      rung: 'greeting',
      reason: `${this.nameOf(avatarId)} was summoned by ${by.name}`,
      lane: 'scheduled',
      anchorMessageId,
      threadId,
      addressedBy: { id: by.id, name: by.name },
    };
    if (this.presenceTurnState(avatarId) !== 'ready') {
      effects.push({
        type: 'candidate.suppressed',
        at,
        avatarId,
        messageId: anchorMessageId,
        rung: 'greeting',
        reason: 'busy',
      });
      // Mid-answer when summoned: greet once that turn settles — unless it is a greeting already.
      const inFlight = [...this.inFlight.values()].find((c) => c.avatarId === avatarId);
      if (inFlight?.kind !== 'greeting') this.pendingGreetings.set(avatarId, greeting);
      return;
    }
    // A re-summon replaces any follow-up still pending: one follow-up per arrival.
    this.removeFollowUps(avatarId);
    this.claim(greeting, effects);
  }

  /** A greeting held back because the avatar was mid-turn when summoned, claimed once it is free. */
  private resumeGreeting(avatarId: string, effects: FloorEffect[]): void {
    const greeting = this.pendingGreetings.get(avatarId);
    if (!greeting || this.presenceTurnState(avatarId) !== 'ready') return; // still busy: keep waiting
    this.pendingGreetings.delete(avatarId);
    this.removeFollowUps(avatarId);
    const threadId =
      greeting.threadId !== undefined && this.threads.has(greeting.threadId) ? greeting.threadId : undefined;
    this.claim({ ...greeting, threadId, reason: `${greeting.reason} (greeting once free)` }, effects);
  }

  private onDismiss(at: number, avatarId: string, effects: FloorEffect[]): void {
    if (!this.presences.has(avatarId)) {
      effects.push(
        this.reject(
          at,
          'AVATAR_NOT_PRESENT',
          `Cannot dismiss ${avatarId}: it is not present in ${this.channelId}.`,
        ),
      );
      return;
    }
    for (const claim of [...this.inFlight.values()]) {
      if (claim.avatarId === avatarId) this.releaseClaim(at, claim, 'dismissed', effects);
    }
    this.stepPresence(avatarId, { type: 'presence.dismissed', at });
    this.presences.delete(avatarId);
    this.deferred.delete(avatarId);
    this.pendingGreetings.delete(avatarId);
    this.removeFollowUps(avatarId);
    for (const [id, snap] of this.threads) {
      if (snap.context.participants.includes(avatarId))
        this.stepThread(id, { type: 'thread.leave', at, avatarId }, effects);
    }
    effects.push({ type: 'presence.dismissed', at, avatarId });
  }

  // ---------------------------------------------------------------- delivery

  private onDelivered(event: Extract<FloorEvent, { type: 'turn.delivered' }>, effects: FloorEffect[]): void {
    const claim = this.inFlight.get(event.turnId);
    if (!claim) {
      effects.push(this.unknownTurn(event.at, event.turnId));
      return;
    }
    this.inFlight.delete(claim.turnId);
    this.unreserveThread(claim.threadId);
    this.stepPresence(claim.avatarId, { type: 'presence.delivered', at: event.at, turnId: claim.turnId });
    const threadStillOpen = claim.threadId !== undefined && this.threads.has(claim.threadId);
    effects.push({
      type: 'turn.consumed',
      at: event.at,
      turnId: claim.turnId,
      avatarId: claim.avatarId,
      rung: claim.rung,
      ...(threadStillOpen ? { threadId: claim.threadId } : {}),
      messageId: event.messageId,
    });
    // Sticky affinity: a human who got an answer from this avatar keeps talking to it.
    const addressedBy = claim.context.addressedById;
    if (addressedBy !== undefined && !this.roster.has(addressedBy)) {
      this.stepPresence(claim.avatarId, { type: 'presence.addressedBy', at: event.at, userId: addressedBy });
    }
    if (claim.kind === 'greeting' && this.config.summonProactiveEnabled) {
      this.followUps.push({
        avatarId: claim.avatarId,
        dueAt: event.at + this.config.summonFollowUpDelayMs,
        anchorMessageId: claim.anchorMessageId,
        summonerName: claim.context.addressedByName ?? 'someone',
      });
    }
    const utterance: Utterance = {
      at: event.at,
      messageId: event.messageId,
      author: { kind: 'avatar', id: claim.avatarId },
      text: event.text,
    };
    if (event.mentions) utterance.mentions = event.mentions;
    if (event.replyTo) utterance.replyTo = event.replyTo;
    if (threadStillOpen) utterance.threadId = claim.threadId;
    if (claim.kind === 'greeting') utterance.announcement = true;
    this.onUtterance(utterance, effects);
    this.resumeGreeting(claim.avatarId, effects);
    this.resumeDeferred(claim.avatarId, effects);
    this.fireDueFollowUps(effects);
  }

  private onReleased(at: number, turnId: string, reason: string, effects: FloorEffect[]): void {
    const claim = this.inFlight.get(turnId);
    if (!claim) {
      effects.push(this.unknownTurn(at, turnId));
      return;
    }
    this.releaseClaim(at, claim, reason, effects);
    this.resumeGreeting(claim.avatarId, effects);
    this.resumeDeferred(claim.avatarId, effects);
    this.fireDueFollowUps(effects);
  }

  /**
   * An avatar that was addressed while busy answers once its turn settles — if the budget it was
   * addressed under is still the live one (a newer human message takes precedence).
   */
  private resumeDeferred(avatarId: string, effects: FloorEffect[]): void {
    const owed = this.deferred.get(avatarId);
    if (!owed || this.presenceTurnState(avatarId) !== 'ready') return; // still busy: keep waiting
    this.deferred.delete(avatarId);
    if (owed.spec.anchorMessageId !== this.budget.anchorMessageId) return;
    const suppress = (reason: SuppressionReason) =>
      effects.push({
        type: 'candidate.suppressed',
        at: this.now,
        avatarId,
        messageId: owed.messageId,
        rung: owed.spec.rung,
        reason,
      });
    let threadId = owed.spec.threadId;
    const thread = threadId !== undefined ? this.threads.get(threadId) : undefined;
    if (threadId !== undefined) {
      // The conversation it was asked in has ended (or the avatar took its leave): nothing is owed.
      if (!thread || thread.context.departed.includes(avatarId)) {
        suppress(thread ? 'thread-ended' : this.endedOutcome(threadId));
        return;
      }
      if (!this.threadHasRoom(thread)) threadId = undefined;
    }
    // The same gate as any candidate, applied now rather than when it was addressed.
    const blocked = this.gate(
      { avatarId, rung: owed.spec.rung, reason: owed.spec.reason, order: 0 },
      owed.spec.lane,
      thread,
    );
    if (blocked) {
      suppress(blocked);
      return;
    }
    this.claim({ ...owed.spec, threadId, reason: `${owed.spec.reason} (answered once free)` }, effects);
  }

  private endedOutcome(threadId: string): SuppressionReason {
    return this.endedThreads.get(threadId) === 'exhausted' ? 'thread-exhausted' : 'thread-ended';
  }

  private releaseClaim(at: number, claim: TurnClaim, reason: string, effects: FloorEffect[]): void {
    this.inFlight.delete(claim.turnId);
    this.unreserveThread(claim.threadId);
    this.stepPresence(claim.avatarId, { type: 'presence.failed', at, turnId: claim.turnId });
    // The budget comes back only if it is still the live one.
    if (claim.anchorMessageId === this.budget.anchorMessageId) {
      if (claim.lane === 'main') this.budget.main++;
      else if (claim.lane === 'cascade') this.budget.cascade++;
    }
    effects.push({ type: 'turn.released', at, turnId: claim.turnId, avatarId: claim.avatarId, reason });
  }

  // ---------------------------------------------------------------- the decision

  private onUtterance(u: Utterance, effects: FloorEffect[]): void {
    const human = u.author.kind === 'human';
    const authorId = u.author.id;
    if (human) this.openBudget(u.messageId);
    const addressedAll = this.matcher.find(u.text, {
      platformMentions: u.mentions,
      replyToAvatarId: u.replyTo?.avatarId,
      authorId,
    });
    const addressed: string[] = [];
    for (const id of addressedAll) {
      if (this.presences.has(id)) addressed.push(id);
      else
        effects.push({
          type: 'candidate.suppressed',
          at: u.at,
          avatarId: id,
          messageId: u.messageId,
          reason: 'not-present',
        });
    }
    for (const id of addressed) {
      this.stepPresence(id, {
        type: 'presence.mentioned',
        at: u.at,
        by: authorId,
        grantTurns: this.config.mentionGrantTurns,
      });
    }
    if (u.replyTo?.avatarId === authorId) {
      effects.push({
        type: 'candidate.suppressed',
        at: u.at,
        avatarId: authorId,
        messageId: u.messageId,
        rung: 'reply',
        reason: 'self',
      });
    }

    // Record the avatar's own turn in its thread, then open or widen a thread for whom it addressed.
    let candidatesAddressed: string[] = addressed;
    if (!human) {
      const farewell = isFarewell(u.text);
      let endedHere: { id: string; participants: readonly string[] } | undefined;
      const own = u.threadId !== undefined ? this.threads.get(u.threadId) : undefined;
      if (own) {
        this.stepThread(
          own.context.id,
          { type: 'thread.turn', at: u.at, speakerId: authorId, addressed, farewell },
          effects,
        );
        if (!this.threads.has(own.context.id))
          endedHere = { id: own.context.id, participants: own.context.participants };
      }
      if (endedHere) {
        // The turn that ended a thread (goodbye, turn limit) does not restart it by naming a partner.
        const ended = endedHere;
        candidatesAddressed = addressed.filter((id) => {
          if (!ended.participants.includes(id)) return true;
          effects.push({
            type: 'candidate.suppressed',
            at: u.at,
            avatarId: id,
            messageId: u.messageId,
            reason: this.endedOutcome(ended.id),
          });
          return false;
        });
      } else if (addressed.length > 0 && !farewell) {
        this.threadForAddress(u, addressed, effects);
      }
    }

    if (addressed.length > 0 && candidatesAddressed.length === 0) return;
    const thread = this.threadOfUtterance(u, candidatesAddressed);
    const lane: BudgetLane = human ? 'main' : 'cascade';
    // Addressed avatars all answer (within the budget); otherwise the ladder picks exactly one,
    // descending past candidates that may not speak right now.
    const single = addressed.length === 0;
    let claimed = false;
    const tryCandidates = (candidates: readonly Candidate[]) => {
      for (const c of candidates) {
        const blocked = single && claimed ? 'lower-rung' : this.gate(c, lane, thread);
        const inThread =
          thread?.context.participants.includes(c.avatarId) &&
          (!human || c.rung === 'thread') &&
          this.threadHasRoom(thread);
        const spec: ClaimSpec = {
          avatarId: c.avatarId,
          kind: 'response',
          rung: c.rung,
          reason: c.reason,
          lane,
          anchorMessageId: this.budget.anchorMessageId ?? u.messageId,
          triggerMessageId: u.messageId,
          triggerText: u.text,
          threadId: inThread && thread ? thread.context.id : undefined,
          addressedBy: { id: authorId, name: this.authorName(u.author) },
        };
        if (blocked) {
          effects.push({
            type: 'candidate.suppressed',
            at: u.at,
            avatarId: c.avatarId,
            messageId: u.messageId,
            rung: c.rung,
            reason: blocked,
          });
          // Someone addressed by name while mid-turn still owes an answer.
          if (blocked === 'busy' && !single) this.deferred.set(c.avatarId, { spec, messageId: u.messageId });
          continue;
        }
        this.claim(spec, effects);
        claimed = true;
      }
    };
    const ranked = this.rankCandidates(u, candidatesAddressed, thread);
    if (!(human && single)) {
      tryCandidates(ranked);
      return;
    }
    // The ambient rungs speak only to a human's unaddressed message that nobody above took; with
    // THREAD_RESPONSE_PRIORITY=low the thread rung waits below round-robin.
    const ambientRank = this.ranks.get('round-robin') ?? 99;
    tryCandidates(ranked.filter((c) => (this.ranks.get(c.rung) ?? 99) < ambientRank));
    tryCandidates(claimed ? [] : this.ambientCandidates(u));
    tryCandidates(ranked.filter((c) => (this.ranks.get(c.rung) ?? 99) >= ambientRank));
  }

  /** Candidates for an utterance, each at its best rung, best first. */
  private rankCandidates(
    u: Utterance,
    addressed: readonly string[],
    thread: ThreadSnapshot | undefined,
  ): Candidate[] {
    const human = u.author.kind === 'human';
    const authorId = u.author.id;
    const authorName = this.authorName(u.author);
    const best = new Map<string, Candidate>();
    const offer = (avatarId: string, rung: Rung, reason: string) => {
      if (avatarId === authorId || !this.presences.has(avatarId)) return;
      const existing = best.get(avatarId);
      const rank = this.ranks.get(rung) ?? 99;
      if (existing && (this.ranks.get(existing.rung) ?? 99) <= rank) return;
      const idx = addressed.indexOf(avatarId);
      const order = idx >= 0 ? idx : addressed.length + (this.rosterOrder.get(avatarId) ?? 0);
      best.set(avatarId, { avatarId, rung, reason, order });
    };

    const replyTo = u.replyTo?.avatarId;
    if (replyTo !== undefined)
      offer(replyTo, 'reply', `${authorName} replied to ${this.nameOf(replyTo)}'s message`);

    if (thread) {
      const t = thread.context;
      const eligible = t.participants.filter(
        (p) => p !== authorId && p !== t.lastSpeakerId && !t.departed.includes(p),
      );
      const chosen =
        addressed.length > 0
          ? eligible.filter((p) => addressed.includes(p))
          : u.announcement
            ? []
            : this.leastRecentSpeaker(eligible);
      for (const p of chosen) {
        offer(
          p,
          'thread',
          `${this.nameOf(p)} is in ${t.mode} thread ${t.id} (${t.turnCount} of ${t.maxTurns} turns used) and did not speak last`,
        );
      }
    }

    if (human && addressed.length === 0) {
      const summoned = this.mostRecentlySummonedWithTurns();
      if (summoned) {
        const turns = this.presences.get(summoned)?.context.summonTurns ?? 0;
        offer(
          summoned,
          'summon',
          `${this.nameOf(summoned)} has ${turns} guaranteed summon turn${turns === 1 ? '' : 's'} left`,
        );
      }
      const sticky = this.stickyAvatarFor(authorId);
      if (sticky) offer(sticky, 'affinity', `${authorName} has been talking to ${this.nameOf(sticky)}`);
    }

    for (const id of addressed) offer(id, 'mention', `${this.nameOf(id)} was mentioned by ${authorName}`);

    return [...best.values()].sort(
      (a, b) => (this.ranks.get(a.rung) ?? 99) - (this.ranks.get(b.rung) ?? 99) || a.order - b.order,
    );
  }

  /** Round-robin among active speakers, else the best initiative score above the threshold. */
  private ambientCandidates(u: Utterance): Candidate[] {
    const authorName = this.authorName(u.author);
    const rr = this.roundRobinSpeaker(u.author.id);
    if (rr) {
      return [
        {
          avatarId: rr,
          rung: 'round-robin',
          reason: `${this.nameOf(rr)}'s turn among the active speakers after ${authorName}`,
          order: 0,
        },
      ];
    }
    const initiative = this.bestInitiative(u.text, u.author.id);
    return initiative ? [{ ...initiative, rung: 'initiative', order: 0 }] : [];
  }

  /** Why a candidate may not take the turn now, or null if it may. */
  private gate(c: Candidate, lane: BudgetLane, thread: ThreadSnapshot | undefined): SuppressionReason | null {
    const presence = this.presences.get(c.avatarId);
    if (!presence) return 'not-present';
    if (this.presenceTurnState(c.avatarId) !== 'ready') return 'busy';
    const p = presence.context;
    switch (c.rung) {
      case 'thread':
        if (!this.config.threadOverrideCooldown && this.now < p.cooldownUntil) return 'cooldown';
        if (!thread || !this.threadHasRoom(thread)) return 'thread-exhausted';
        break;
      case 'summon':
        if (p.lastSpokeAt !== null && this.now < p.lastSpokeAt + this.config.recentSummonCooldownMs)
          return 'cooldown';
        break;
      case 'round-robin':
      case 'initiative':
        if (this.now < p.cooldownUntil) return 'cooldown';
        break;
      default:
        break; // replies, mentions and affinity answer through the cooldown (seed 003)
    }
    if (lane === 'main' && this.budget.main <= 0) return 'budget-main';
    if (lane === 'cascade' && this.budget.cascade <= 0) return 'budget-cascade';
    return null;
  }

  private claim(
    spec: {
      avatarId: string;
      kind: TurnKind;
      rung: Rung;
      reason: string;
      lane: BudgetLane;
      anchorMessageId: string;
      triggerMessageId?: string;
      triggerText?: string;
      threadId: string | undefined;
      addressedBy?: { id: string; name: string };
    },
    effects: FloorEffect[],
  ): void {
    if (spec.lane === 'main') this.budget.main--;
    else if (spec.lane === 'cascade') this.budget.cascade--;
    const thread = spec.threadId !== undefined ? this.threads.get(spec.threadId) : undefined;
    let threadTurn: number | undefined;
    if (thread) {
      const reserved = (this.threadReservations.get(thread.context.id) ?? 0) + 1;
      this.threadReservations.set(thread.context.id, reserved);
      threadTurn = thread.context.turnCount + reserved;
    }
    const turnId = `${this.channelId}:t${++this.turnSeq}`;
    this.stepPresence(spec.avatarId, { type: 'presence.claim', at: this.now, turnId, rung: spec.rung });
    // Nobody may answer this turn when the thread is full or the cascade lane is empty.
    const closing =
      (thread !== undefined && threadTurn !== undefined && threadTurn >= thread.context.maxTurns) ||
      this.budget.cascade <= 0;
    // Built by assignment rather than conditional spreads: this runs for every turn.
    const presentNames: string[] = [];
    for (const id of this.presences.keys()) if (id !== spec.avatarId) presentNames.push(this.nameOf(id));
    const threadPartnerNames: string[] = [];
    if (thread)
      for (const id of thread.context.participants)
        if (id !== spec.avatarId) threadPartnerNames.push(this.nameOf(id));
    const context: TurnContext = { presentNames, threadPartnerNames, closing };
    if (spec.triggerText !== undefined) context.triggerText = spec.triggerText;
    if (spec.addressedBy) {
      context.addressedByName = spec.addressedBy.name;
      context.addressedById = spec.addressedBy.id;
    }
    if (thread && threadTurn !== undefined) {
      context.threadTurn = threadTurn;
      context.threadMaxTurns = thread.context.maxTurns;
    }
    if (spec.kind === 'greeting') context.maxChars = this.config.greetingMaxChars;
    const claim: TurnClaim = {
      turnId,
      channelId: this.channelId,
      avatarId: spec.avatarId,
      kind: spec.kind,
      rung: spec.rung,
      reason: spec.reason,
      lane: spec.lane,
      anchorMessageId: spec.anchorMessageId,
      claimedAt: this.now,
      context,
    };
    if (spec.triggerMessageId) claim.triggerMessageId = spec.triggerMessageId;
    if (thread) claim.threadId = thread.context.id;
    this.inFlight.set(turnId, claim);
    effects.push({ type: 'turn.claimed', at: this.now, turn: claim });
  }

  // ---------------------------------------------------------------- threads

  /** The thread an utterance belongs to, for the thread rung. */
  private threadOfUtterance(u: Utterance, addressed: readonly string[]): ThreadSnapshot | undefined {
    if (u.author.kind === 'avatar') return this.latestThreadWith(u.author.id);
    // A human message continues the thread of whoever it addresses, or else the latest thread.
    if (addressed.length > 0) {
      for (const id of addressed) {
        const t = this.latestThreadWith(id);
        if (t) return t;
      }
      return undefined;
    }
    let latest: ThreadSnapshot | undefined;
    for (const snap of this.threads.values()) {
      if (!latest || snap.context.lastActivityAt >= latest.context.lastActivityAt) latest = snap;
    }
    return latest;
  }

  /** An avatar addressed others: widen its current thread, or open a mention/reply thread. */
  private threadForAddress(u: Utterance, addressed: readonly string[], effects: FloorEffect[]): void {
    const current = this.latestThreadWith(u.author.id);
    if (current) {
      for (const id of addressed) {
        if (!current.context.participants.includes(id)) {
          this.stepThread(current.context.id, { type: 'thread.join', at: u.at, avatarId: id }, effects);
        }
      }
      return;
    }
    if (!this.config.botMentionCreateThread) return;
    const replyOnly = addressed.length === 1 && u.replyTo?.avatarId === addressed[0] && !u.mentions?.length;
    this.openThread(
      replyOnly ? 'reply' : 'mention',
      [u.author.id, ...addressed],
      replyOnly ? this.config.threadMaxTurns : this.config.botMentionThreadTurns,
      this.config.threadTtlMs,
      u.at,
      effects,
    );
  }

  private openThread(
    mode: ThreadMode,
    participants: string[],
    maxTurns: number,
    ttlMs: number,
    at: number,
    effects: FloorEffect[],
  ): string {
    const id = `${this.channelId}:th${++this.threadSeq}`;
    const snap = this.engine.thread.initial({
      id,
      channelId: this.channelId,
      mode,
      participants,
      maxTurns,
      ttlMs,
      quietMs: this.config.threadQuietMs,
      extendOnActivity: this.config.threadExtendOnActivity,
      at,
    });
    this.threads.set(id, snap);
    effects.push({
      type: 'thread.opened',
      at,
      threadId: id,
      mode,
      participants: [...snap.context.participants],
      maxTurns,
      expiresAt: snap.context.expiresAt,
    });
    return id;
  }

  private stepThread(id: string, event: ConversationThreadEvent, effects: FloorEffect[]): void {
    const snap = this.threads.get(id);
    if (!snap) return;
    const next = this.engine.thread.step(snap, event);
    if (next.status === 'done') {
      this.threads.delete(id);
      this.threadReservations.delete(id);
      const outcome = next.value as ThreadOutcome;
      this.endedThreads.set(id, outcome);
      if (this.endedThreads.size > 64)
        this.endedThreads.delete(this.endedThreads.keys().next().value as string);
      effects.push({
        type: 'thread.ended',
        at: next.context.now,
        threadId: id,
        outcome,
        detail: next.context.detail ?? outcome,
        turns: next.context.turnCount,
      });
    } else {
      this.threads.set(id, next);
    }
  }

  private threadHasRoom(thread: ThreadSnapshot): boolean {
    const reserved = this.threadReservations.get(thread.context.id) ?? 0;
    return thread.context.turnCount + reserved < thread.context.maxTurns;
  }

  private unreserveThread(threadId: string | undefined): void {
    if (threadId === undefined) return;
    const reserved = this.threadReservations.get(threadId);
    if (reserved === undefined) return;
    if (reserved <= 1) this.threadReservations.delete(threadId);
    else this.threadReservations.set(threadId, reserved - 1);
  }

  private latestThreadWith(avatarId: string): ThreadSnapshot | undefined {
    let latest: ThreadSnapshot | undefined;
    for (const snap of this.threads.values()) {
      const c = snap.context;
      if (!c.participants.includes(avatarId) || c.departed.includes(avatarId)) continue;
      if (!latest || c.lastActivityAt >= latest.context.lastActivityAt) latest = snap;
    }
    return latest;
  }

  // ---------------------------------------------------------------- rung helpers

  private leastRecentSpeaker(ids: readonly string[]): string[] {
    let pick: string | undefined;
    let pickAt = Number.POSITIVE_INFINITY;
    for (const id of ids) {
      const spoke = this.presences.get(id)?.context.lastSpokeAt ?? Number.NEGATIVE_INFINITY;
      if (spoke < pickAt) {
        pick = id;
        pickAt = spoke;
      }
    }
    return pick === undefined ? [] : [pick];
  }

  /** The avatar holding guaranteed turns that were granted most recently (summon or mention). */
  private mostRecentlySummonedWithTurns(): string | undefined {
    let pick: string | undefined;
    let grantedAt = Number.NEGATIVE_INFINITY;
    for (const [id, snap] of this.presences) {
      const c = snap.context;
      if (c.summonTurns > 0 && c.grantedAt !== null && c.grantedAt > grantedAt) {
        pick = id;
        grantedAt = c.grantedAt;
      }
    }
    return pick;
  }

  private stickyAvatarFor(userId: string): string | undefined {
    let pick: string | undefined;
    let until = -1;
    for (const [id, snap] of this.presences) {
      if (!hasAffinity(snap.context, userId, this.now)) continue;
      const u = snap.context.affinity[userId] ?? 0;
      if (u > until) {
        pick = id;
        until = u;
      }
    }
    return pick;
  }

  /** Among avatars that spoke within the active-speaker window, the one that spoke longest ago. */
  private roundRobinSpeaker(authorId: string): string | undefined {
    let pick: string | undefined;
    let pickAt = Number.POSITIVE_INFINITY;
    let active = 0;
    for (const [id, snap] of this.presences) {
      const spoke = snap.context.lastSpokeAt;
      if (id === authorId || spoke === null || this.now - spoke > this.config.activeSpeakerWindowMs) continue;
      active++;
      if (this.now < snap.context.cooldownUntil) continue;
      if (spoke < pickAt) {
        pick = id;
        pickAt = spoke;
      }
    }
    return active >= 2 ? pick : undefined;
  }

  private bestInitiative(text: string, authorId: string): { avatarId: string; reason: string } | undefined {
    const words = wordsOf(text);
    let best: { avatarId: string; score: number; reason: string } | undefined;
    for (const [id, snap] of this.presences) {
      if (id === authorId || this.now < snap.context.cooldownUntil) continue;
      const c = snap.context;
      const s = initiativeScore({
        attention: attentionAt(c.attention, this.now, this.config.attentionHalfLifeMs),
        lastSpokeAt: c.lastSpokeAt,
        now: this.now,
        windowMs: this.config.activeSpeakerWindowMs,
        topics: this.roster.get(id)?.topics,
        words,
      });
      if (s.score < this.config.initiativeThreshold) continue;
      if (!best || s.score > best.score) {
        best = {
          avatarId: id,
          score: s.score,
          reason: `${this.nameOf(id)}'s initiative ${s.score.toFixed(2)} (attention ${s.attention.toFixed(2)}, hunger ${s.hunger.toFixed(2)}, topic ${s.topic.toFixed(2)}) ≥ ${this.config.initiativeThreshold}`,
        };
      }
    }
    return best;
  }

  // ---------------------------------------------------------------- small helpers

  private openBudget(anchorMessageId: string): void {
    this.budget = {
      anchorMessageId,
      main: this.config.maxResponsesPerMessage,
      cascade: this.config.botCascadeLimit,
    };
  }

  private ensurePresence(avatarId: string, at: number): void {
    if (this.presences.has(avatarId)) return;
    this.presences.set(
      avatarId,
      this.engine.presence.initial({ channelId: this.channelId, avatarId, settings: this.settings, at }),
    );
  }

  private stepPresence(avatarId: string, event: AvatarPresenceEvent): void {
    const snap = this.presences.get(avatarId);
    if (snap) this.presences.set(avatarId, this.engine.presence.step(snap, event));
  }

  private presenceTurnState(avatarId: string): 'ready' | 'claimed' | 'generating' | undefined {
    const snap = this.presences.get(avatarId);
    if (snap?.status !== 'active') return undefined;
    const value = snap.value as { present?: { turn?: 'ready' | 'claimed' | 'generating' } };
    return value.present?.turn;
  }

  private removeFollowUps(avatarId: string): void {
    for (let i = this.followUps.length - 1; i >= 0; i--) {
      if (this.followUps[i]?.avatarId === avatarId) this.followUps.splice(i, 1);
    }
  }

  private rebuildMatcher(): MentionMatcher {
    this.rosterOrder = new Map([...this.roster.keys()].map((id, i) => [id, i]));
    return createMentionMatcher([...this.roster.values()]);
  }

  private nameOf(avatarId: string): string {
    return this.roster.get(avatarId)?.name ?? avatarId;
  }

  private authorName(author: Author): string {
    return author.kind === 'human' ? author.name : this.nameOf(author.id);
  }

  private reject(at: number, code: string, message: string): FloorEffect {
    return { type: 'event.rejected', at, code, message };
  }

  private unknownTurn(at: number, turnId: string): FloorEffect {
    return this.reject(
      at,
      'TURN_UNKNOWN',
      `Turn ${turnId} is not in flight in ${this.channelId} (already settled, or never claimed).`,
    );
  }
}
