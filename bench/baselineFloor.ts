/**
 * A plain-object channel floor: the same decision as `src/machines/channelFloor.ts` (same ladder,
 * budgets, cooldowns, threads with turn limits and TTL, summons and follow-ups, same effects and
 * reason strings), written with plain records mutated in place instead of machine states stepped
 * through a statechart, so the benchmark can show what that representation costs.
 *
 * What is not about the representation is shared with the floor: its types (events, effects,
 * claims, and the presence and thread machines' context fields, picked below), the mention matcher,
 * attention decay, initiative score, farewell detection and rung order. The control flow mirrors
 * the floor method for method, so the comparison isolates the state representation, not text
 * matching or the shape of the algorithm. The decision itself is deliberately written again here:
 * the benchmark's agreement check (same avatar and rung claimed for every trigger) is what keeps
 * the two honest, so any change to the floor's behaviour has to be ported here (see
 * `git log -p src/machines/channelFloor.ts`; last ported: a summon of an avatar mid-answer greets once it is free).
 *
 * Differences in data: the presence mode (ambient/conversing) is not kept, since no decision reads
 * it (delivery compares `at` with `conversingUntil` directly); the claim a presence holds is two
 * flat fields; thread reservations live on the thread record; sticky affinity is a Map created on
 * first use; records do not repeat the channel id, settings or clock.
 */
import type { CoordinationConfig } from '../src/config/coordinationConfig.js';
import { attentionAt, boostAttention } from '../src/machines/attention.js';
import type { AvatarPresenceContext } from '../src/machines/avatarPresence.machine.js';
import type { ChannelFloorOptions } from '../src/machines/channelFloor.js';
import type { ConversationThreadContext } from '../src/machines/conversationThread.machine.js';
import { isFarewell } from '../src/machines/farewell.js';
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
} from '../src/machines/floorTypes.js';
import { initiativeScore, wordsOf } from '../src/machines/initiative.js';
import { createMentionMatcher, type MentionMatcher } from '../src/machines/mentionMatcher.js';
import { rungRanks } from '../src/machines/rungOrder.js';

/** The presence machine's context, minus what every presence of a floor shares, mutated in place. */
type Presence = Pick<
  AvatarPresenceContext,
  | 'summonTurns'
  | 'grantedAt'
  | 'conversingUntil'
  | 'lastSpokeAt'
  | 'cooldownUntil'
  | 'attention'
  | 'lastMentionAt'
  | 'lastMentionBy'
  | 'delivered'
> & {
  /** userId -> expiry of sticky affinity; created on first use. */
  affinity: Map<string, number> | null;
  /** The turn in flight, if any; `generating` once the generator reported progress. */
  turnId: string | null;
  claimRung: Rung | null;
  generating: boolean;
};

/** The thread machine's context, minus the constants, mutated in place. */
type Thread = Pick<
  ConversationThreadContext,
  | 'id'
  | 'mode'
  | 'participants'
  | 'departed'
  | 'maxTurns'
  | 'ttlMs'
  | 'turnCount'
  | 'now'
  | 'lastActivityAt'
  | 'expiresAt'
  | 'quietDeadline'
  | 'lastSpeakerId'
> & {
  /** Claimed turns not yet delivered. */
  reserved: number;
};

interface Candidate {
  avatarId: string;
  rung: Rung;
  reason: string;
  order: number;
}

/** A message to decide on: a human's, or an avatar's delivered turn. */
type Utterance = Omit<Extract<FloorEvent, { type: 'message' }>, 'type'> & {
  threadId?: string | undefined;
  announcement?: boolean;
};

type ClaimSpec = Pick<
  TurnClaim,
  'avatarId' | 'kind' | 'rung' | 'reason' | 'lane' | 'anchorMessageId' | 'triggerMessageId'
> &
  Pick<TurnContext, 'triggerText'> & {
    threadId: string | undefined;
    addressedBy?: { id: string; name: string };
  };

interface FollowUp {
  avatarId: string;
  dueAt: number;
  anchorMessageId: string;
  summonerName: string;
}

const SPENDS_SUMMON_TURN: ReadonlySet<Rung> = new Set<Rung>(['summon', 'follow-up']);

const deadlineOf = (t: Thread) =>
  t.quietDeadline !== null ? Math.min(t.quietDeadline, t.expiresAt) : t.expiresAt;

const suppressed = (
  at: number,
  avatarId: string,
  messageId: string,
  reason: SuppressionReason,
  rung?: Rung,
): FloorEffect =>
  rung === undefined
    ? { type: 'candidate.suppressed', at, avatarId, messageId, reason }
    : { type: 'candidate.suppressed', at, avatarId, messageId, rung, reason };

const rejected = (at: number, code: string, message: string): FloorEffect => ({
  type: 'event.rejected',
  at,
  code,
  message,
});

export class BaselineFloor {
  readonly channelId: string;
  private readonly config: CoordinationConfig;
  private readonly ranks: ReadonlyMap<Rung, number>;
  private readonly roster = new Map<string, AvatarProfile>();
  private rosterOrder = new Map<string, number>();
  private matcher: MentionMatcher;
  private readonly presences = new Map<string, Presence>();
  private readonly threads = new Map<string, Thread>();
  private readonly endedThreads = new Map<string, ThreadOutcome>();
  private readonly inFlight = new Map<string, TurnClaim>();
  private readonly followUps: FollowUp[] = [];
  /** Answers owed by avatars addressed while busy. */
  private readonly deferred = new Map<string, { spec: ClaimSpec; messageId: string }>();
  private readonly pendingGreetings = new Map<string, ClaimSpec>();
  private budgetAnchor: string | undefined;
  private budgetMain = 0;
  private budgetCascade = 0;
  private now: number;
  private turnSeq = 0;
  private threadSeq = 0;

  constructor(options: ChannelFloorOptions) {
    this.channelId = options.channelId;
    this.config = options.config;
    this.now = options.at ?? 0;
    this.ranks = rungRanks(options.config.threadResponsePriority);
    for (const avatar of options.roster) this.roster.set(avatar.id, avatar);
    this.matcher = this.rebuildMatcher();
    for (const id of options.present ?? []) if (this.roster.has(id)) this.ensurePresence(id, this.now);
  }

  handle(event: FloorEvent): FloorEffect[] {
    const effects: FloorEffect[] = [];
    const at = Math.max(this.now, event.at);
    this.advance(at, effects);
    switch (event.type) {
      case 'message':
        if (event.author.kind === 'avatar' && !this.presences.has(event.author.id)) {
          const message = `Avatar ${event.author.id} is not present in ${this.channelId}; summon it first.`;
          effects.push(rejected(at, 'AVATAR_NOT_PRESENT', message));
        } else {
          this.onUtterance({ ...event, at }, effects);
        }
        break;
      case 'summon':
        this.onSummon(at, event.avatarId, event.by, event.messageId, effects);
        break;
      case 'dismiss':
        this.onDismiss(at, event.avatarId, effects);
        break;
      case 'avatar.join':
        this.roster.set(event.avatar.id, event.avatar);
        this.matcher = this.rebuildMatcher();
        if (event.present ?? true) this.ensurePresence(event.avatar.id, at);
        break;
      case 'tick':
        break;
      case 'turn.generated': {
        const claim = this.inFlight.get(event.turnId);
        const p = claim && this.presences.get(claim.avatarId);
        if (!claim) effects.push(this.unknownTurn(at, event.turnId));
        else if (p && p.turnId === claim.turnId) p.generating = true;
        break;
      }
      case 'turn.delivered':
        this.onDelivered({ ...event, at }, effects);
        break;
      case 'turn.failed':
      case 'turn.aborted': {
        const claim = this.inFlight.get(event.turnId);
        if (!claim) {
          effects.push(this.unknownTurn(at, event.turnId));
          break;
        }
        const verb = event.type === 'turn.failed' ? 'failed' : 'aborted';
        this.releaseClaim(at, claim, `${verb}: ${event.reason}`, effects);
        this.afterTurn(claim.avatarId, effects);
        break;
      }
    }
    return effects;
  }

  nextDeadline(): number | undefined {
    let next: number | undefined;
    for (const t of this.threads.values()) {
      const d = deadlineOf(t);
      if (next === undefined || d < next) next = d;
    }
    for (const f of this.followUps) {
      if (this.isReady(f.avatarId) && (next === undefined || f.dueAt < next)) next = f.dueAt;
    }
    return next === undefined ? undefined : Math.max(next, this.now);
  }

  // ---------------------------------------------------------------- time, summons, delivery

  private advance(at: number, effects: FloorEffect[]): void {
    for (const t of this.threads.values()) {
      const deadline = deadlineOf(t);
      if (deadline <= at) {
        t.now = Math.max(t.now, deadline);
        this.settleThread(t, effects);
      }
    }
    this.now = at;
    this.fireDueFollowUps(effects);
  }

  private fireDueFollowUps(effects: FloorEffect[]): void {
    for (let i = 0; i < this.followUps.length; ) {
      const f = this.followUps[i] as FollowUp;
      if (f.dueAt > this.now || !this.isReady(f.avatarId)) {
        i++;
        continue;
      }
      this.followUps.splice(i, 1);
      this.claim(
        {
          avatarId: f.avatarId,
          kind: 'follow-up',
          rung: 'follow-up',
          reason: `${this.nameOf(f.avatarId)} follows up on arriving, summoned by ${f.summonerName}`,
          lane: 'scheduled',
          anchorMessageId: f.anchorMessageId,
          threadId: this.latestThreadWith(f.avatarId)?.id,
        },
        effects,
      );
    }
  }

  private onSummon(
    at: number,
    avatarId: string,
    by: { id: string; name: string },
    messageId: string | undefined,
    effects: FloorEffect[],
  ): void {
    if (!this.roster.has(avatarId)) {
      const message = `Cannot summon ${avatarId}: no avatar with that id is known in ${this.channelId}.`;
      effects.push(rejected(at, 'AVATAR_UNKNOWN', message));
      return;
    }
    const others = [...this.presences.keys()].filter((id) => id !== avatarId);
    const p = this.ensurePresence(avatarId, at);
    const turns = this.config.summonInitialTurns;
    p.summonTurns = Math.max(p.summonTurns, turns);
    p.grantedAt = at;
    p.conversingUntil = Math.max(p.conversingUntil, at + this.config.summonConversationDurationMs);
    p.attention = { value: 1, at };
    effects.push({ type: 'presence.summoned', at, avatarId, turnsGranted: turns });
    const anchorMessageId = messageId ?? `${this.channelId}:summon${this.turnSeq + 1}`;
    this.openBudget(anchorMessageId);
    const current = this.latestThreadWith(avatarId);
    const threadId =
      current?.mode === 'summon'
        ? current.id
        : others.length > 0
          ? this.openThread(
              'summon',
              [avatarId, ...others],
              this.config.summonThreadTurns,
              this.config.summonConversationDurationMs,
              at,
              effects,
            )
          : undefined;
    const greeting: ClaimSpec = {
      avatarId,
      kind: 'greeting',
      rung: 'greeting',
      reason: `${this.nameOf(avatarId)} was summoned by ${by.name}`,
      lane: 'scheduled',
      anchorMessageId,
      threadId,
      addressedBy: by,
    };
    if (p.turnId !== null) {
      effects.push(suppressed(at, avatarId, anchorMessageId, 'busy', 'greeting'));
      if (this.inFlight.get(p.turnId)?.kind !== 'greeting') this.pendingGreetings.set(avatarId, greeting);
      return;
    }
    this.removeFollowUps(avatarId);
    this.claim(greeting, effects);
  }

  private resumeGreeting(avatarId: string, effects: FloorEffect[]): void {
    const greeting = this.pendingGreetings.get(avatarId);
    if (!greeting || !this.isReady(avatarId)) return;
    this.pendingGreetings.delete(avatarId);
    this.removeFollowUps(avatarId);
    const threadId =
      greeting.threadId !== undefined && this.threads.has(greeting.threadId) ? greeting.threadId : undefined;
    this.claim({ ...greeting, threadId, reason: `${greeting.reason} (greeting once free)` }, effects);
  }

  private onDismiss(at: number, avatarId: string, effects: FloorEffect[]): void {
    if (!this.presences.has(avatarId)) {
      const message = `Cannot dismiss ${avatarId}: it is not present in ${this.channelId}.`;
      effects.push(rejected(at, 'AVATAR_NOT_PRESENT', message));
      return;
    }
    for (const claim of [...this.inFlight.values()]) {
      if (claim.avatarId === avatarId) this.releaseClaim(at, claim, 'dismissed', effects);
    }
    this.presences.delete(avatarId);
    this.deferred.delete(avatarId);
    this.pendingGreetings.delete(avatarId);
    this.removeFollowUps(avatarId);
    for (const t of this.threads.values()) {
      if (!t.participants.includes(avatarId)) continue;
      t.now = Math.max(t.now, at);
      if (!t.departed.includes(avatarId)) t.departed.push(avatarId);
      this.settleThread(t, effects);
    }
    effects.push({ type: 'presence.dismissed', at, avatarId });
  }

  private onDelivered(event: Extract<FloorEvent, { type: 'turn.delivered' }>, effects: FloorEffect[]): void {
    const claim = this.inFlight.get(event.turnId);
    if (!claim) {
      effects.push(this.unknownTurn(event.at, event.turnId));
      return;
    }
    const { at, messageId } = event;
    const { avatarId, turnId, threadId } = claim;
    this.inFlight.delete(turnId);
    this.unreserveThread(threadId);
    const p = this.presences.get(avatarId);
    if (p && p.turnId === turnId) {
      if (p.claimRung !== null && SPENDS_SUMMON_TURN.has(p.claimRung) && p.summonTurns > 0) p.summonTurns--;
      const conversing = at < p.conversingUntil;
      this.clearTurn(p);
      p.lastSpokeAt = at;
      p.cooldownUntil =
        at + (conversing ? this.config.recentSummonCooldownMs : this.config.perAvatarCooldownMs);
      p.delivered++;
      p.attention = boostAttention(p.attention, at, this.config.attentionHalfLifeMs, 0.2);
    }
    const threadStillOpen = threadId !== undefined && this.threads.has(threadId);
    effects.push({
      type: 'turn.consumed',
      at,
      turnId,
      avatarId,
      rung: claim.rung,
      ...(threadStillOpen ? { threadId } : {}),
      messageId,
    });
    const addressedBy = claim.context.addressedById;
    if (addressedBy !== undefined && !this.roster.has(addressedBy) && p) {
      const affinity = p.affinity ?? new Map<string, number>();
      for (const [user, until] of affinity) if (until <= at) affinity.delete(user);
      affinity.set(addressedBy, at + this.config.stickyAffinityTtlMs);
      p.affinity = affinity;
    }
    const greeting = claim.kind === 'greeting';
    if (greeting && this.config.summonProactiveEnabled) {
      this.followUps.push({
        avatarId,
        dueAt: at + this.config.summonFollowUpDelayMs,
        anchorMessageId: claim.anchorMessageId,
        summonerName: claim.context.addressedByName ?? 'someone',
      });
    }
    const { text, mentions, replyTo } = event;
    const author: Author = { kind: 'avatar', id: avatarId };
    const own = threadStillOpen ? threadId : undefined;
    this.onUtterance(
      { at, messageId, author, text, mentions, replyTo, threadId: own, announcement: greeting },
      effects,
    );
    this.afterTurn(avatarId, effects);
  }

  /** Once an avatar's turn settles: the answer it owes, then follow-ups that waited for it. */
  private afterTurn(avatarId: string, effects: FloorEffect[]): void {
    this.resumeGreeting(avatarId, effects);
    this.resumeDeferred(avatarId, effects);
    this.fireDueFollowUps(effects);
  }

  private resumeDeferred(avatarId: string, effects: FloorEffect[]): void {
    const owed = this.deferred.get(avatarId);
    if (!owed || !this.isReady(avatarId)) return;
    this.deferred.delete(avatarId);
    const { spec, messageId } = owed;
    if (spec.anchorMessageId !== this.budgetAnchor) return;
    let threadId = spec.threadId;
    const thread = threadId !== undefined ? this.threads.get(threadId) : undefined;
    let blocked: SuppressionReason | null = null;
    if (threadId !== undefined && (!thread || thread.departed.includes(avatarId))) {
      blocked = thread ? 'thread-ended' : this.endedOutcome(threadId);
    } else {
      if (thread && !this.threadHasRoom(thread)) threadId = undefined;
      blocked = this.gate(avatarId, spec.rung, spec.lane, thread);
    }
    if (blocked) effects.push(suppressed(this.now, avatarId, messageId, blocked, spec.rung));
    else this.claim({ ...spec, threadId, reason: `${spec.reason} (answered once free)` }, effects);
  }

  private endedOutcome(threadId: string): SuppressionReason {
    return this.endedThreads.get(threadId) === 'exhausted' ? 'thread-exhausted' : 'thread-ended';
  }

  private releaseClaim(at: number, claim: TurnClaim, reason: string, effects: FloorEffect[]): void {
    const { avatarId, turnId } = claim;
    this.inFlight.delete(turnId);
    this.unreserveThread(claim.threadId);
    const p = this.presences.get(avatarId);
    if (p && p.turnId === turnId) this.clearTurn(p);
    if (claim.anchorMessageId === this.budgetAnchor) {
      if (claim.lane === 'main') this.budgetMain++;
      else if (claim.lane === 'cascade') this.budgetCascade++;
    }
    effects.push({ type: 'turn.released', at, turnId, avatarId, reason });
  }

  // ---------------------------------------------------------------- the decision

  private onUtterance(u: Utterance, effects: FloorEffect[]): void {
    const human = u.author.kind === 'human';
    const authorId = u.author.id;
    const { at, messageId } = u;
    if (human) this.openBudget(messageId);
    const addressedAll = this.matcher.find(u.text, {
      ...(u.mentions ? { platformMentions: u.mentions } : {}),
      ...(u.replyTo?.avatarId ? { replyToAvatarId: u.replyTo.avatarId } : {}),
      authorId,
    });
    const addressed: string[] = [];
    for (const id of addressedAll) {
      if (this.presences.has(id)) addressed.push(id);
      else effects.push(suppressed(at, id, messageId, 'not-present'));
    }
    const grant = this.config.mentionGrantTurns;
    for (const id of addressed) {
      const p = this.presences.get(id) as Presence;
      p.lastMentionAt = at;
      p.lastMentionBy = authorId;
      if (p.summonTurns === 0 && grant > 0) {
        p.summonTurns = grant;
        p.grantedAt = at;
      }
      p.attention = boostAttention(p.attention, at, this.config.attentionHalfLifeMs, 0.5);
    }
    if (u.replyTo?.avatarId === authorId) effects.push(suppressed(at, authorId, messageId, 'self', 'reply'));

    // Record the avatar's own turn in its thread, then open or widen a thread for whom it addressed.
    let candidatesAddressed = addressed;
    if (!human) {
      const farewell = isFarewell(u.text);
      const own = u.threadId !== undefined ? this.threads.get(u.threadId) : undefined;
      if (own) this.threadTurn(own, at, authorId, addressed, farewell, effects);
      if (own && !this.threads.has(own.id)) {
        // The turn that ended a thread does not restart it by naming a partner. (Its participants
        // may now include the author, who is never among the addressed.)
        candidatesAddressed = addressed.filter((id) => {
          if (!own.participants.includes(id)) return true;
          effects.push(suppressed(at, id, messageId, this.endedOutcome(own.id)));
          return false;
        });
      } else if (addressed.length > 0 && !farewell) {
        this.threadForAddress(u, addressed, effects);
      }
    }

    if (addressed.length > 0 && candidatesAddressed.length === 0) return;
    const thread = this.threadOfUtterance(u, candidatesAddressed);
    const lane: BudgetLane = human ? 'main' : 'cascade';
    const single = addressed.length === 0;
    const addressedBy = { id: authorId, name: this.authorName(u.author) };
    let claimed = false;
    const tryCandidates = (candidates: readonly Candidate[]) => {
      for (const c of candidates) {
        const blocked = single && claimed ? 'lower-rung' : this.gate(c.avatarId, c.rung, lane, thread);
        const inThread =
          thread?.participants.includes(c.avatarId) &&
          (!human || c.rung === 'thread') &&
          this.threadHasRoom(thread);
        const spec: ClaimSpec = {
          avatarId: c.avatarId,
          kind: 'response',
          rung: c.rung,
          reason: c.reason,
          lane,
          anchorMessageId: this.budgetAnchor ?? messageId,
          triggerMessageId: messageId,
          triggerText: u.text,
          threadId: inThread && thread ? thread.id : undefined,
          addressedBy,
        };
        if (!blocked) {
          this.claim(spec, effects);
          claimed = true;
          continue;
        }
        effects.push(suppressed(at, c.avatarId, messageId, blocked, c.rung));
        if (blocked === 'busy' && !single) this.deferred.set(c.avatarId, { spec, messageId });
      }
    };
    const ranked = this.rankCandidates(u, candidatesAddressed, thread);
    if (!(human && single)) {
      tryCandidates(ranked);
      return;
    }
    const ambientRank = this.rank('round-robin');
    tryCandidates(ranked.filter((c) => this.rank(c.rung) < ambientRank));
    tryCandidates(claimed ? [] : this.ambientCandidates(u));
    tryCandidates(ranked.filter((c) => this.rank(c.rung) >= ambientRank));
  }

  private rankCandidates(
    u: Utterance,
    addressed: readonly string[],
    thread: Thread | undefined,
  ): Candidate[] {
    const authorId = u.author.id;
    const authorName = this.authorName(u.author);
    const best = new Map<string, Candidate>();
    const offer = (avatarId: string, rung: Rung, reason: string) => {
      if (avatarId === authorId || !this.presences.has(avatarId)) return;
      const existing = best.get(avatarId);
      if (existing && this.rank(existing.rung) <= this.rank(rung)) return;
      const idx = addressed.indexOf(avatarId);
      const order = idx >= 0 ? idx : addressed.length + (this.rosterOrder.get(avatarId) ?? 0);
      best.set(avatarId, { avatarId, rung, reason, order });
    };

    const replyTo = u.replyTo?.avatarId;
    if (replyTo !== undefined)
      offer(replyTo, 'reply', `${authorName} replied to ${this.nameOf(replyTo)}'s message`);

    if (thread) {
      const t = thread;
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
        const used = `${t.turnCount} of ${t.maxTurns} turns used`;
        offer(
          p,
          'thread',
          `${this.nameOf(p)} is in ${t.mode} thread ${t.id} (${used}) and did not speak last`,
        );
      }
    }

    if (u.author.kind === 'human' && addressed.length === 0) {
      const summoned = this.mostRecentlySummonedWithTurns();
      if (summoned) {
        const turns = this.presences.get(summoned)?.summonTurns ?? 0;
        const left = `${turns} guaranteed summon turn${turns === 1 ? '' : 's'} left`;
        offer(summoned, 'summon', `${this.nameOf(summoned)} has ${left}`);
      }
      const sticky = this.stickyAvatarFor(authorId);
      if (sticky) offer(sticky, 'affinity', `${authorName} has been talking to ${this.nameOf(sticky)}`);
    }

    for (const id of addressed) offer(id, 'mention', `${this.nameOf(id)} was mentioned by ${authorName}`);

    return [...best.values()].sort((a, b) => this.rank(a.rung) - this.rank(b.rung) || a.order - b.order);
  }

  private ambientCandidates(u: Utterance): Candidate[] {
    const rr = this.roundRobinSpeaker(u.author.id);
    if (rr) {
      const reason = `${this.nameOf(rr)}'s turn among the active speakers after ${this.authorName(u.author)}`;
      return [{ avatarId: rr, rung: 'round-robin', reason, order: 0 }];
    }
    const initiative = this.bestInitiative(u.text, u.author.id);
    return initiative ? [{ ...initiative, rung: 'initiative', order: 0 }] : [];
  }

  private mostRecentlySummonedWithTurns(): string | undefined {
    let pick: string | undefined;
    let grantedAt = Number.NEGATIVE_INFINITY;
    for (const [id, p] of this.presences) {
      if (p.summonTurns > 0 && p.grantedAt !== null && p.grantedAt > grantedAt) {
        pick = id;
        grantedAt = p.grantedAt;
      }
    }
    return pick;
  }

  private stickyAvatarFor(userId: string): string | undefined {
    let pick: string | undefined;
    let until = -1;
    for (const [id, p] of this.presences) {
      const u = p.affinity?.get(userId);
      if (u !== undefined && u > this.now && u > until) {
        pick = id;
        until = u;
      }
    }
    return pick;
  }

  private roundRobinSpeaker(authorId: string): string | undefined {
    let pick: string | undefined;
    let pickAt = Number.POSITIVE_INFINITY;
    let active = 0;
    for (const [id, p] of this.presences) {
      const spoke = p.lastSpokeAt;
      if (id === authorId || spoke === null || this.now - spoke > this.config.activeSpeakerWindowMs) continue;
      active++;
      if (this.now >= p.cooldownUntil && spoke < pickAt) {
        pick = id;
        pickAt = spoke;
      }
    }
    return active >= 2 ? pick : undefined;
  }

  private bestInitiative(text: string, authorId: string): { avatarId: string; reason: string } | undefined {
    const words = wordsOf(text);
    const { activeSpeakerWindowMs: windowMs, attentionHalfLifeMs, initiativeThreshold } = this.config;
    let best: { avatarId: string; score: number; reason: string } | undefined;
    for (const [id, p] of this.presences) {
      if (id === authorId || this.now < p.cooldownUntil) continue;
      const s = initiativeScore({
        attention: attentionAt(p.attention, this.now, attentionHalfLifeMs),
        lastSpokeAt: p.lastSpokeAt,
        now: this.now,
        windowMs,
        topics: this.roster.get(id)?.topics,
        words,
      });
      if (s.score < initiativeThreshold || (best && s.score <= best.score)) continue;
      const parts = `attention ${s.attention.toFixed(2)}, hunger ${s.hunger.toFixed(2)}, topic ${s.topic.toFixed(2)}`;
      const reason = `${this.nameOf(id)}'s initiative ${s.score.toFixed(2)} (${parts}) ≥ ${initiativeThreshold}`;
      best = { avatarId: id, score: s.score, reason };
    }
    return best;
  }

  /** Why an avatar may not take a turn at this rung now, or null if it may. */
  private gate(
    avatarId: string,
    rung: Rung,
    lane: BudgetLane,
    thread: Thread | undefined,
  ): SuppressionReason | null {
    const p = this.presences.get(avatarId);
    if (!p) return 'not-present';
    if (p.turnId !== null) return 'busy';
    const cooling = this.now < p.cooldownUntil;
    if (rung === 'thread') {
      if (!this.config.threadOverrideCooldown && cooling) return 'cooldown';
      if (!thread || !this.threadHasRoom(thread)) return 'thread-exhausted';
    } else if (rung === 'summon') {
      if (p.lastSpokeAt !== null && this.now < p.lastSpokeAt + this.config.recentSummonCooldownMs)
        return 'cooldown';
    } else if ((rung === 'round-robin' || rung === 'initiative') && cooling) return 'cooldown';
    if (lane === 'main' && this.budgetMain <= 0) return 'budget-main';
    if (lane === 'cascade' && this.budgetCascade <= 0) return 'budget-cascade';
    return null;
  }

  private claim(spec: ClaimSpec, effects: FloorEffect[]): void {
    const { avatarId, kind, rung, lane, triggerMessageId, triggerText, addressedBy } = spec;
    if (lane === 'main') this.budgetMain--;
    else if (lane === 'cascade') this.budgetCascade--;
    const thread = spec.threadId !== undefined ? this.threads.get(spec.threadId) : undefined;
    const threadTurn = thread ? thread.turnCount + ++thread.reserved : undefined;
    const turnId = `${this.channelId}:t${++this.turnSeq}`;
    const p = this.presences.get(avatarId);
    if (p && p.turnId === null) {
      p.turnId = turnId;
      p.claimRung = rung;
    }
    // Nobody may answer this turn when the thread is full or the cascade lane is empty.
    const closing =
      (thread !== undefined && threadTurn !== undefined && threadTurn >= thread.maxTurns) ||
      this.budgetCascade <= 0;
    const presentNames: string[] = [];
    for (const id of this.presences.keys()) if (id !== avatarId) presentNames.push(this.nameOf(id));
    const threadPartnerNames: string[] = [];
    for (const id of thread?.participants ?? [])
      if (id !== avatarId) threadPartnerNames.push(this.nameOf(id));
    const claim: TurnClaim = {
      turnId,
      channelId: this.channelId,
      avatarId,
      kind,
      rung,
      reason: spec.reason,
      lane,
      anchorMessageId: spec.anchorMessageId,
      ...(triggerMessageId ? { triggerMessageId } : {}),
      ...(thread ? { threadId: thread.id } : {}),
      claimedAt: this.now,
      context: {
        ...(triggerText !== undefined ? { triggerText } : {}),
        ...(addressedBy ? { addressedByName: addressedBy.name, addressedById: addressedBy.id } : {}),
        presentNames,
        threadPartnerNames,
        ...(thread && threadTurn !== undefined ? { threadTurn, threadMaxTurns: thread.maxTurns } : {}),
        closing,
        ...(kind === 'greeting' ? { maxChars: this.config.greetingMaxChars } : {}),
      },
    };
    this.inFlight.set(turnId, claim);
    effects.push({ type: 'turn.claimed', at: this.now, turn: claim });
  }

  // ---------------------------------------------------------------- threads

  private threadOfUtterance(u: Utterance, addressed: readonly string[]): Thread | undefined {
    if (u.author.kind === 'avatar') return this.latestThreadWith(u.author.id);
    if (addressed.length > 0) {
      for (const id of addressed) {
        const t = this.latestThreadWith(id);
        if (t) return t;
      }
      return undefined;
    }
    let latest: Thread | undefined;
    for (const t of this.threads.values())
      if (!latest || t.lastActivityAt >= latest.lastActivityAt) latest = t;
    return latest;
  }

  private threadForAddress(u: Utterance, addressed: readonly string[], effects: FloorEffect[]): void {
    const current = this.latestThreadWith(u.author.id);
    if (current) {
      for (const id of addressed) {
        if (current.participants.includes(id) || !this.threads.has(current.id)) continue;
        current.now = Math.max(current.now, u.at);
        current.participants.push(id);
        this.settleThread(current, effects);
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
    const t: Thread = {
      id,
      mode,
      participants: [...new Set(participants)],
      departed: [],
      maxTurns,
      ttlMs,
      turnCount: 0,
      now: at,
      lastActivityAt: at,
      expiresAt: at + ttlMs,
      quietDeadline: null,
      lastSpeakerId: null,
      reserved: 0,
    };
    this.threads.set(id, t);
    const opened = [...t.participants];
    effects.push({
      type: 'thread.opened',
      at,
      threadId: id,
      mode,
      participants: opened,
      maxTurns,
      expiresAt: t.expiresAt,
    });
    return id;
  }

  private threadTurn(
    t: Thread,
    at: number,
    speakerId: string,
    addressed: readonly string[],
    farewell: boolean,
    effects: FloorEffect[],
  ): void {
    // A turn delivered after a deadline does not count: the thread had already ended.
    const inTime = at < t.expiresAt && (t.quietDeadline === null || at < t.quietDeadline);
    t.now = Math.max(t.now, at);
    if (inTime) {
      if (!t.participants.includes(speakerId)) t.participants.push(speakerId);
      t.turnCount++;
      t.lastSpeakerId = speakerId;
      t.lastActivityAt = at;
      if (this.config.threadExtendOnActivity) t.expiresAt = Math.max(t.expiresAt, at + t.ttlMs);
      const waiting = addressed.some((a) => a !== speakerId && !t.departed.includes(a));
      t.quietDeadline = waiting ? null : at + this.config.threadQuietMs;
      if (farewell && !t.departed.includes(speakerId)) t.departed.push(speakerId);
    }
    this.settleThread(t, effects);
  }

  /** The thread machine's eventless transitions: end the thread if a final condition holds. */
  private settleThread(t: Thread, effects: FloorEffect[]): void {
    let outcome: ThreadOutcome;
    let detail: string;
    if (t.turnCount >= t.maxTurns) {
      outcome = 'exhausted';
      detail = `turn limit of ${t.maxTurns} reached`;
    } else if (t.departed.length > 0 && t.participants.filter((p) => !t.departed.includes(p)).length < 2) {
      outcome = 'concluded';
      detail = 'participants said goodbye';
    } else if (t.quietDeadline !== null && t.now >= Math.min(t.quietDeadline, t.expiresAt)) {
      outcome = 'concluded';
      detail =
        t.quietDeadline <= t.expiresAt
          ? `nobody was addressed for ${Math.round(this.config.threadQuietMs / 1000)}s`
          : 'nobody was waiting for an answer when the deadline came';
    } else if (t.now >= t.expiresAt) {
      outcome = 'expired';
      detail = `deadline passed after ${t.turnCount} turns`;
    } else {
      return;
    }
    this.threads.delete(t.id);
    this.endedThreads.set(t.id, outcome);
    if (this.endedThreads.size > 64)
      this.endedThreads.delete(this.endedThreads.keys().next().value as string);
    effects.push({ type: 'thread.ended', at: t.now, threadId: t.id, outcome, detail, turns: t.turnCount });
  }

  private threadHasRoom(t: Thread): boolean {
    return t.turnCount + t.reserved < t.maxTurns;
  }

  private unreserveThread(threadId: string | undefined): void {
    const t = threadId !== undefined ? this.threads.get(threadId) : undefined;
    if (t && t.reserved > 0) t.reserved--;
  }

  private latestThreadWith(avatarId: string): Thread | undefined {
    let latest: Thread | undefined;
    for (const t of this.threads.values()) {
      if (!t.participants.includes(avatarId) || t.departed.includes(avatarId)) continue;
      if (!latest || t.lastActivityAt >= latest.lastActivityAt) latest = t;
    }
    return latest;
  }

  // ---------------------------------------------------------------- small helpers

  private rank(rung: Rung): number {
    return this.ranks.get(rung) ?? 99;
  }

  private leastRecentSpeaker(ids: readonly string[]): string[] {
    let pick: string | undefined;
    let pickAt = Number.POSITIVE_INFINITY;
    for (const id of ids) {
      const spoke = this.presences.get(id)?.lastSpokeAt ?? Number.NEGATIVE_INFINITY;
      if (spoke < pickAt) {
        pick = id;
        pickAt = spoke;
      }
    }
    return pick === undefined ? [] : [pick];
  }

  private isReady(avatarId: string): boolean {
    return this.presences.get(avatarId)?.turnId === null;
  }

  private clearTurn(p: Presence): void {
    p.turnId = null;
    p.claimRung = null;
    p.generating = false;
  }

  private openBudget(anchorMessageId: string): void {
    this.budgetAnchor = anchorMessageId;
    this.budgetMain = this.config.maxResponsesPerMessage;
    this.budgetCascade = this.config.botCascadeLimit;
  }

  private ensurePresence(avatarId: string, at: number): Presence {
    let p = this.presences.get(avatarId);
    if (!p) {
      p = {
        summonTurns: 0,
        grantedAt: null,
        conversingUntil: 0,
        lastSpokeAt: null,
        cooldownUntil: 0,
        // A newcomer is mildly attentive (as in the presence machine).
        attention: { value: 0.25, at },
        lastMentionAt: null,
        lastMentionBy: null,
        delivered: 0,
        affinity: null,
        turnId: null,
        claimRung: null,
        generating: false,
      };
      this.presences.set(avatarId, p);
    }
    return p;
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

  private unknownTurn(at: number, turnId: string): FloorEffect {
    const message = `Turn ${turnId} is not in flight in ${this.channelId} (already settled, or never claimed).`;
    return rejected(at, 'TURN_UNKNOWN', message);
  }
}
