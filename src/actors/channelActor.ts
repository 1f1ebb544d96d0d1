import type { CoordinationConfig } from '../config/coordinationConfig.js';
import { clipReply } from '../delivery/clipReply.js';
import { ensureFeedback } from '../delivery/feedbackGuarantee.js';
import {
  type PreparationRequest,
  prepareOutgoingResponse,
  type VoicePolicy,
} from '../delivery/preparation.js';
import { capNoticeText } from '../floor/capNoticeText.js';
import type { ChannelFloor, FloorView } from '../floor/channelFloor.js';
import { FloorDriver, type FloorDriverHooks, type TurnRelease } from '../floor/floorDriver.js';
import type { AvatarProfile, FloorEffect, FloorEvent, TurnClaim } from '../floor/floorTypes.js';
import type { Logger } from '../logging/logger.js';
import type { Clock } from '../ports/clock.js';
import type { TroupeErrorCode } from '../ports/errorCodes.js';
import type { TurnGenerationResult, TurnSituation } from '../ports/model.js';
import type { Outbox } from '../ports/outbox.js';
import type { ChannelRef, OutgoingResponse, Speaker } from '../ports/outgoingResponse.js';
import type { RoutingOutcome } from '../ports/routingOutcome.js';
import { describe, isTroupeError, TroupeError } from '../ports/troupeError.js';
import type { AvatarDefinition } from './avatarDefinition.js';
import type { ChannelDocument, ChannelPersistence } from './channelPersistence.js';
import type { InspectionEvent } from './inspectionEvent.js';
import type { RoutingActor } from './routingActor.js';
import type { RuntimeEvent } from './runtimeEvents.js';
import type { GenerationInput, TurnExecutor } from './turnExecutor.js';
import type { WorkTracker, WorkUnit } from './workTracker.js';

/** What a channel actor is wired to; the runtime supplies it. */
export interface ChannelActorDeps {
  channel: ChannelRef;
  /** `kind:id`, the channel's key in the registry, history and logs. */
  key: string;
  avatars: ReadonlyMap<string, AvatarDefinition>;
  /** Whether any avatar lives here from the start (such a channel is never "finished"). */
  hasResidents: boolean;
  config: CoordinationConfig;
  clock: Clock;
  executor: TurnExecutor;
  routing: RoutingActor;
  tracker: WorkTracker;
  /** The runtime's logger; the actor logs through a child bound to its channel, made on first use. */
  logger: Logger;
  inspect: (event: InspectionEvent) => void;
  /** True when anyone observes inspection events (they are not built otherwise). */
  inspecting: () => boolean;
  /**
   * The cast as turns need it, shared by every channel: ids, and names and aliases, for the
   * model's situation; each avatar's speaker, names and voice policy, for its responses (frozen).
   */
  cast: {
    avatarIds: readonly string[];
    avatarNames: readonly string[];
    speakers: ReadonlyMap<string, Speaker>;
    /** Each avatar's name and aliases (the labels preparation takes off a reply). */
    speakerNames: ReadonlyMap<string, readonly string[]>;
    voicePolicies: ReadonlyMap<string, VoicePolicy>;
  };
  /** Called after the actor applied a routing outcome (the runtime drops a finished actor). */
  afterOutcome?: (actor: ChannelActor) => void;
  /** The longest model reply sent; a longer one is clipped before preparation. */
  maxReplyChars: number;
  /** Reports a failure the embedder should hear of (a model call that failed), on `errors$`. */
  onError?: (error: TroupeError) => void;
  /** Stores the channel's state as it changes (batched); absent: the state lives in memory only. */
  persistence?: ChannelPersistence;
  /** The outbox, to find out after a restart what happened to turns that were in flight. */
  outbox: Outbox;
  /** True when the store outlives the process (not memory): replies then wait for the floor's write. */
  durable: boolean;
}

/** What the channel actor starts from: a fresh floor, or one restored from the store. */
export interface ChannelStart {
  floor: ChannelFloor;
  /** Turns spoken per thread and avatar (restored with the floor). */
  spoken?: readonly [string, string, number][];
  /** True when the floor came from the store: turns that were in flight are resumed. */
  restored: boolean;
  /** Inbound message ids already handled (restored with the floor), oldest first. */
  seen?: readonly string[];
  /** Events other processes stored for this channel: applied first, before the ones that waited here. */
  handedOver?: readonly (RuntimeEvent & { at: number })[];
}

interface TurnInFlight {
  claim: TurnClaim;
  abort: AbortController;
  /** The turn as the runtime counts it: it moves its wait along (model, store). */
  unit: WorkUnit;
  /** How many channel messages the turn's prompt showed the avatar (none built: undefined). */
  seen?: number | undefined;
}

interface AwaitedAnswer {
  claim: TurnClaim;
  text: string;
  mentions: string[];
}

/**
 * A turn's generation input. Its abort signal is made only when read (a getter on the class, so
 * no shape per object): most models never read it, and an `AbortSignal` costs about 2 us.
 */
class TurnGeneration implements GenerationInput {
  constructor(
    readonly channelKey: string,
    readonly avatar: AvatarProfile,
    readonly turn: TurnClaim,
    readonly situation: TurnSituation,
    private readonly abort: AbortController,
    readonly unit: WorkUnit,
  ) {}

  seen: number | undefined = undefined;

  get signal(): AbortSignal {
    return this.abort.signal;
  }
}

/** How many inbound voice-note ids a channel remembers (to answer in kind). */
const VOICE_NOTES_REMEMBERED = 256;
/**
 * How many inbound message ids a channel remembers to drop redeliveries. A gateway resends what a
 * resumed session may have missed, the channel's last few messages; the oldest ids go first.
 */
const MESSAGES_REMEMBERED = 128;
/** How many of them are stored with the channel (a redelivery after a restart is recent). */
const MESSAGES_STORED = 100;

/**
 * One actor per channel: it owns the channel's {@link ChannelFloor} and serialises every decision
 * about the channel (events arrive one at a time; the floor is synchronous). For each claimed
 * turn it runs the pipeline generation → preparation → feedback guarantee → routing, and feeds
 * the routing outcome back to the floor as `turn.delivered` or `turn.failed`. Channels are
 * independent actors, so their generations and sends run concurrently.
 */
export class ChannelActor implements FloorDriverHooks {
  private readonly turns = new Map<string, TurnInFlight>();
  private readonly awaiting = new Map<string, AwaitedAnswer>();
  /** Inbound voice-note ids (made with the first one: most channels never get one). */
  private voiceNotes: Set<string> | undefined;
  private readonly seenMessages = new Set<string>();
  private stopped = false;
  private floor: ChannelFloor | undefined;
  /** Applies events to the floor, acts on its effects and keeps its tick armed (set with the floor). */
  private driver: FloorDriver | undefined;
  /** Work that arrived while the channel was loading, in order. */
  /** Work waiting for the floor to load, with the inbound event it applies (none for an outcome). */
  private mailbox: { work: () => void; event?: RuntimeEvent & { at: number } }[] | undefined;
  private lastActivity: number;

  /** Applies a delivery's outcome the moment routing publishes it (made on first use). */
  private outcomeHandler: ((outcome: RoutingOutcome) => void) | undefined;
  private channelLogger: Logger | undefined;

  constructor(private readonly deps: ChannelActorDeps) {
    this.lastActivity = deps.clock.now();
  }

  /** The channel's logger (most channels never log, so it is made on first use). */
  private get log(): Logger {
    this.channelLogger ??= this.deps.logger.child({ channel: this.deps.key });
    return this.channelLogger;
  }

  /** What routing calls with the outcome of a reply this actor sent. */
  private get settleOutcome(): (outcome: RoutingOutcome) => void {
    this.outcomeHandler ??= (outcome) => {
      this.onOutcome(outcome);
      this.deps.afterOutcome?.(this);
    };
    return this.outcomeHandler;
  }

  /**
   * Starts the actor on a floor from `load` (fresh or restored). Events that arrive meanwhile
   * wait in the mailbox. A restored floor's turns in flight are resumed first: a reply already
   * delivered is applied, one recorded but unsent is awaited (routing resends it), one never
   * recorded is generated again.
   */
  start(load: () => Promise<ChannelStart>): Promise<void> {
    this.started = this.run(load);
    return this.started;
  }

  /** Resolves once the floor is loaded (and restored turns resumed). */
  whenReady(): Promise<void> {
    return this.started;
  }

  private started: Promise<void> = Promise.resolve();

  private async run(load: () => Promise<ChannelStart>): Promise<void> {
    const start = await load();
    if (this.stopped) return;
    this.floor = start.floor;
    this.driver = new FloorDriver({
      floor: start.floor,
      clock: this.deps.clock,
      spoken: start.spoken ?? [],
      hooks: this,
    });
    for (const id of start.seen ?? []) remember(this.seenMessages, id, MESSAGES_REMEMBERED);
    // A fresh floor without residents starts empty: nothing to tell the presence record.
    if (start.restored || this.deps.hasResidents)
      this.deps.executor.recordPresenceAtStart(
        this.deps.key,
        start.floor.view().present.map((p) => p.id),
        this.deps.clock.now(),
      );
    if (start.restored) await this.resumeInFlight();
    const queued = this.mailbox ?? [];
    this.mailbox = undefined;
    for (const event of start.handedOver ?? []) this.receive(event);
    for (const { work } of queued) work();
    this.driver.armTick();
  }

  /** True once the floor is loaded. */
  get ready(): boolean {
    return this.floor !== undefined;
  }

  /** Clock time of the last event or outcome. */
  get lastActivityAt(): number {
    return this.lastActivity;
  }

  /** True when nothing is in flight, so the actor may be written to the store and dropped. */
  canPassivate(): boolean {
    return this.ready && this.turns.size === 0 && this.awaiting.size === 0 && this.mailbox === undefined;
  }

  /** The idempotency key of a turn's response: unique per channel, floor lifetime and turn. */
  keyFor(turnId: string): string {
    return `${this.deps.key}:${this.floorOrThrow().epoch}:${turnId}`;
  }

  /** The stored form of the channel right now. */
  document(): { document: ChannelDocument; wakeAt: number | undefined } {
    const floor = this.floorOrThrow();
    const spoken = this.driver?.spokenCounts() ?? [];
    const snapshot = floor.snapshot();
    const wakeAt = this.wakeAt();
    const seen = [...this.seenMessages].slice(-MESSAGES_STORED);
    return { document: { floor: snapshot, spoken, seen }, wakeAt };
  }

  /** When a restarted runtime must wake this channel: at once with turns in flight, else at its next deadline. */
  wakeAt(): number | undefined {
    const floor = this.floorOrThrow();
    // Turns in flight must resume as soon as a restarted runtime can: wake at once.
    return floor.hasTurnsInFlight() ? floor.snapshotTime() : floor.nextDeadline();
  }

  private floorOrThrow(): ChannelFloor {
    if (!this.floor) throw new Error(`channel ${this.deps.key} is not loaded yet`);
    return this.floor;
  }

  private async resumeInFlight(): Promise<void> {
    const floor = this.floorOrThrow();
    for (const claim of floor.view().inFlight) {
      const key = this.keyFor(claim.turnId);
      const entry = await this.deps.outbox.get(key).catch(() => undefined);
      const at = this.deps.clock.now();
      if (!entry) {
        this.log.info(
          { turnId: claim.turnId },
          'resuming a turn that was in flight when the process stopped',
        );
        this.onClaim(claim);
      } else if (entry.settled?.sent) {
        // The delivery as it was applied before the restart (a timed write may have left it out).
        this.awaiting.set(key, { claim, text: entry.response.text ?? '', mentions: [] });
        this.onOutcome({
          idempotencyKey: key,
          channel: entry.response.channel,
          origin: entry.response.origin,
          attempted: true,
          sent: true,
          parts: entry.sentParts,
          voiceFellBackToText: false,
          duplicate: true,
          at: Math.min(entry.settled.at, at),
        });
      } else if (entry.settled) {
        this.apply({
          type: 'turn.failed',
          at,
          turnId: claim.turnId,
          reason: `not delivered: ${entry.settled.error?.code ?? 'unknown'}`,
        });
      } else {
        // Recorded, not settled: routing resends it (on start, or now); its outcome settles the turn.
        this.awaiting.set(key, { claim, text: entry.response.text ?? '', mentions: [] });
        this.deps.tracker.track(
          this.deps.routing.resume(entry, this.settleOutcome),
          this.deps.tracker.begin('resend', 'transport', this.deps.key, claim.avatarId),
        );
      }
    }
  }

  /** Work that waits for the floor to load, in order. */
  private later(work: () => void, event?: RuntimeEvent & { at: number }): void {
    this.mailbox ??= [];
    this.mailbox.push(event ? { work, event } : { work });
  }

  /** The channel's key (`kind:id`). */
  get key(): string {
    return this.deps.key;
  }

  /** Applies one inbound event (already validated and stamped with a time). */
  receive(event: RuntimeEvent & { at: number }): void {
    if (this.stopped) return;
    if (!this.floor) {
      this.later(() => this.receive(event), event);
      return;
    }
    this.lastActivity = this.deps.clock.now();
    switch (event.type) {
      case 'channel.message': {
        if (this.seenMessages.has(event.messageId)) {
          this.log.debug({ messageId: event.messageId }, 'message already seen; ignored');
          return;
        }
        remember(this.seenMessages, event.messageId, MESSAGES_REMEMBERED);
        if (event.voice) {
          this.voiceNotes ??= new Set();
          remember(this.voiceNotes, event.messageId, VOICE_NOTES_REMEMBERED);
        }
        const author = event.author;
        const name =
          author.kind === 'human' ? author.name : (this.deps.avatars.get(author.id)?.name ?? author.id);
        this.trackWrite(
          this.deps.executor.recordInbound({
            channelId: this.deps.key,
            messageId: event.messageId,
            at: event.at,
            // A person's author is already { kind, id, name } (the store copies what it keeps).
            author: author.kind === 'human' ? author : { kind: author.kind, id: author.id, name },
            text: event.text,
          }),
          'history write failed',
        );
        this.apply({
          type: 'message',
          at: event.at,
          messageId: event.messageId,
          author: event.author,
          text: event.text,
          ...(event.mentions ? { mentions: event.mentions } : {}),
          ...(event.replyTo ? { replyTo: event.replyTo } : {}),
        });
        break;
      }
      case 'avatar.summon':
        this.apply({
          type: 'summon',
          at: event.at,
          avatarId: event.avatarId,
          by: event.by,
          ...(event.messageId ? { messageId: event.messageId } : {}),
        });
        break;
      case 'avatar.dismiss':
        this.apply({ type: 'dismiss', at: event.at, avatarId: event.avatarId });
        break;
      case 'response.send':
        break; // the runtime routes ready responses directly
    }
  }

  /**
   * The runtime's cast changed: the floor takes the new roster. A forgotten avatar leaves the
   * channel at once: its turns are dropped and their generations aborted.
   */
  useRoster(roster: readonly AvatarProfile[]): void {
    if (this.stopped) return;
    if (!this.floor) {
      this.later(() => this.useRoster(roster));
      return;
    }
    if (!this.floor.useRoster(roster)) return;
    const kept = new Set(roster.map((a) => a.id));
    for (const [turnId, turn] of this.turns) {
      if (kept.has(turn.claim.avatarId)) continue;
      this.turns.delete(turnId);
      turn.abort.abort(new Error('the avatar was forgotten'));
    }
    // A tick stores the floor without the avatar and re-arms its deadline.
    this.apply({ type: 'tick', at: this.deps.clock.now() });
  }

  /** A routing outcome for a response this channel prepared. */
  onOutcome(outcome: RoutingOutcome): void {
    if (this.stopped) return;
    if (!this.floor) {
      this.later(() => this.onOutcome(outcome));
      return;
    }
    this.lastActivity = this.deps.clock.now();
    const awaited = this.awaiting.get(outcome.idempotencyKey);
    if (!awaited) return;
    this.awaiting.delete(outcome.idempotencyKey);
    const { claim } = awaited;
    // When routing settled it: the time a restart gives the same delivery again from the outbox.
    const at = Math.min(outcome.at, this.deps.clock.now());
    const first = outcome.parts[0];
    if (outcome.sent && first) {
      const avatar = this.deps.avatars.get(claim.avatarId);
      this.trackWrite(
        this.deps.executor.recordDelivered({
          channelId: this.deps.key,
          messageId: first.messageId,
          at,
          author: { kind: 'avatar', id: claim.avatarId, name: avatar?.name ?? claim.avatarId },
          text: awaited.text,
        }),
        'history write failed',
      );
      const addressee = claim.context.addressedById;
      if (addressee !== undefined && addressee !== claim.avatarId)
        this.trackWrite(
          this.deps.executor.recordExchange({
            speakerId: claim.avatarId,
            addresseeId: addressee,
            channelKey: this.deps.key,
            text: awaited.text,
            at,
          }),
          'relationship write failed',
        );
      const delivered: FloorEvent = {
        type: 'turn.delivered',
        at,
        turnId: claim.turnId,
        messageId: first.messageId,
        text: awaited.text,
        avatarId: claim.avatarId,
      };
      if (awaited.mentions.length > 0) delivered.mentions = awaited.mentions;
      this.apply(delivered);
    } else {
      this.apply({
        type: 'turn.failed',
        at,
        turnId: claim.turnId,
        reason: `not delivered: ${outcome.error?.code ?? 'unknown'}`,
      });
    }
  }

  /** Tracks a write still in flight (none when the store took it at once); a failure is logged. */
  private trackWrite(write: Promise<void> | undefined, failed: string): void {
    if (write)
      this.deps.tracker.track(write, this.deps.tracker.begin('write', 'store', this.deps.key), (error) =>
        this.log.warn({ err: error }, failed),
      );
  }

  /** A read-only picture of the floor. */
  view(): FloorView | undefined {
    return this.floor?.view();
  }

  /** True when nothing is left here that a later event would need: the actor can be dropped. */
  isFinished(): boolean {
    if (!this.floor || this.deps.hasResidents || this.turns.size > 0 || this.awaiting.size > 0) return false;
    const view = this.floor.view();
    return (
      view.present.length === 0 &&
      view.threads.length === 0 &&
      view.inFlight.length === 0 &&
      view.pendingFollowUps.length === 0
    );
  }

  /**
   * Aborts the generations in flight (the runtime is stopping past its deadline). Their turns stay
   * claimed in the floor, so a restarted runtime generates them again.
   */
  cancelTurns(reason: unknown): void {
    const turns = [...this.turns.values()];
    this.turns.clear();
    for (const turn of turns) turn.abort.abort(reason);
  }

  /** Cancels timers and in-flight generations; the actor accepts nothing afterwards. */
  /**
   * Drops the work waiting for the floor to load (the channel could not be taken: another
   * runtime owns it); returns the inbound events among it, in order, to be handed over or refused.
   */
  discardWaiting(): (RuntimeEvent & { at: number })[] {
    const events = (this.mailbox ?? []).flatMap((entry) => (entry.event ? [entry.event] : []));
    this.mailbox = undefined;
    return events;
  }

  stop(): void {
    this.stopped = true;
    this.driver?.stop();
    for (const turn of this.turns.values()) turn.abort.abort(new Error('runtime stopped'));
  }

  /** Applies an event through the driver (which persists, and re-arms the tick). */
  private apply(event: FloorEvent): void {
    if (!this.driver) throw new Error(`channel ${this.deps.key} is not loaded yet`);
    this.driver.apply(event);
  }

  /** {@link FloorDriverHooks}: every effect goes to inspection; a rejected event is logged. */
  onEffect(effect: FloorEffect): void {
    if (this.deps.inspecting())
      this.deps.inspect({ type: 'floor.effect', at: effect.at, channelKey: this.deps.key, effect });
    if (effect.type === 'event.rejected') this.log.info({ code: effect.code }, effect.message);
    else if (effect.type === 'presence.summoned')
      this.trackWrite(
        this.deps.executor.recordArrival(this.deps.key, effect.avatarId, effect.at),
        'presence record write failed',
      );
    else if (effect.type === 'presence.dismissed')
      this.trackWrite(
        this.deps.executor.recordDeparture(this.deps.key, effect.avatarId, effect.at),
        'presence record write failed',
      );
    else if (effect.type === 'cap.notice') this.sendCapNotice(effect);
  }

  /** Tells the person who addressed a capped avatar why it is quiet (the floor says once per window). */
  private sendCapNotice(effect: Extract<FloorEffect, { type: 'cap.notice' }>): void {
    const { deps } = this;
    const avatar = deps.avatars.get(effect.avatarId);
    const speaker = deps.cast.speakers.get(effect.avatarId) ?? speakerOf(avatar ?? { id: effect.avatarId });
    const response: OutgoingResponse = {
      idempotencyKey: this.keyFor(`notice:${effect.messageId}:${effect.avatarId}`),
      channel: deps.channel,
      speaker,
      text: capNoticeText(speaker.name, effect.reason, effect.resetsAt),
      attachments: [],
      replyTo: { messageId: effect.messageId },
      origin: { kind: 'notice', avatarId: effect.avatarId, triggerMessageId: effect.messageId },
      preparedAt: effect.at,
    };
    this.log.info({ avatar: effect.avatarId, reason: effect.reason }, 'cap notice');
    const { tracker } = deps;
    const unit = tracker.begin('reply', 'transport', deps.key, effect.avatarId);
    tracker.track(deps.routing.routePrepared(response, this.settleOutcome, unit), unit, (error) =>
      this.log.warn({ err: error, avatar: effect.avatarId }, 'cap notice not sent'),
    );
  }

  /** {@link FloorDriverHooks}: a released turn's generation is aborted. */
  onRelease(release: TurnRelease): void {
    const turn = this.turns.get(release.turnId);
    this.turns.delete(release.turnId);
    turn?.abort.abort(new Error(`turn released: ${release.reason}`));
  }

  /** {@link FloorDriverHooks}: the store learns the channel changed, and how (written in batches). */
  onApplied(event: FloorEvent): void {
    this.deps.persistence?.markDirty(this.deps.key, this, event);
  }

  /** {@link FloorDriverHooks}: a claimed turn's pipeline starts. */
  onClaim(claim: TurnClaim): void {
    const { tracker } = this.deps;
    const unit = tracker.begin('turn', 'model', this.deps.key, claim.avatarId);
    const turn: TurnInFlight = { claim, abort: new AbortController(), unit };
    this.turns.set(claim.turnId, turn);
    tracker.track(this.runTurn(turn), unit);
  }

  /**
   * A claimed turn's pipeline: generation, preparation, the feedback guarantee, routing. Every
   * expected failure is handled inside; the catch is a bug guard that keeps the floor sane. Kept
   * small: an async function's whole frame lives as long as the turn, so the work between its
   * waits is done by {@link ChannelActor.prepareReply}.
   */
  private async runTurn(turn: TurnInFlight): Promise<void> {
    try {
      let generation: TurnGenerationResult | undefined;
      let failure: { error: unknown } | undefined;
      const input = this.generationInput(turn);
      try {
        generation = await this.deps.executor.generate(input);
      } catch (error) {
        failure = { error };
      }
      turn.seen = input.seen;
      const response = this.prepareReply(turn, generation, failure);
      if (!response) return;
      // The stored floor must know the turn before the outbox does (a restart then resumes it).
      // Flushes requested in the same tick are written together. A store that does not outlive
      // the process has no restart to prepare for.
      if (this.deps.durable) {
        turn.unit.waitOn('store');
        await this.floorStored();
      }
      // Built here, so routing does not validate it again; its outcome is applied as published,
      // so the turn need not wait for it (the delivery is tracked on its own).
      const { tracker } = this.deps;
      const unit = tracker.begin('reply', 'transport', this.deps.key, turn.claim.avatarId);
      tracker.track(this.deps.routing.routePrepared(response, this.settleOutcome, unit), unit, (error) =>
        this.crashed(turn, error),
      );
    } catch (error) {
      this.crashed(turn, error);
    }
  }

  /**
   * Resolves once the floor's changes are stored, or, on a store that keeps writes in order, once
   * they are handed to it: the outbox record made next is then stored with them or after them
   * (one commit for both), never without them.
   */
  private floorStored(): Promise<void> {
    const { persistence, key, outbox } = this.deps;
    if (!persistence) return Promise.resolve();
    const stored = outbox.writesInOrder ? persistence.flushIssued([key]) : persistence.flush([key]);
    return stored.catch(() => undefined);
  }

  /** A bug guard that keeps the floor sane: the pipeline handles every expected failure. */
  private crashed(turn: TurnInFlight, error: unknown): void {
    const { claim } = turn;
    this.log.error({ err: error, turnId: claim.turnId }, 'turn pipeline crashed');
    if (this.turns.delete(claim.turnId))
      this.apply({
        type: 'turn.failed',
        at: this.deps.clock.now(),
        turnId: claim.turnId,
        reason: 'internal error',
      });
  }

  /** What the model is asked for a turn. */
  private generationInput(turn: TurnInFlight): GenerationInput {
    const { deps } = this;
    const { claim } = turn;
    return new TurnGeneration(
      deps.key,
      deps.avatars.get(claim.avatarId) ?? { id: claim.avatarId, name: claim.avatarId },
      claim,
      {
        avatarIds: deps.cast.avatarIds,
        avatarNames: deps.cast.avatarNames,
        spokenInThread:
          claim.threadId !== undefined
            ? (this.driver?.spokenInThread(claim.threadId, claim.avatarId) ?? 0)
            : 0,
        greetingMaxChars: claim.context.maxChars ?? deps.config.greetingMaxChars,
      },
      turn.abort,
      turn.unit,
    );
  }

  /**
   * After generation: applies what it means to the floor and makes the response to send, if any
   * (preparation, then the feedback guarantee). Undefined when the turn was released meanwhile or
   * says nothing.
   */
  private prepareReply(
    turn: TurnInFlight,
    generation: TurnGenerationResult | undefined,
    failure: { error: unknown } | undefined,
  ): OutgoingResponse | undefined {
    const { deps } = this;
    const { claim } = turn;
    let errorCode: string | undefined;
    if (failure) {
      const { error } = failure;
      errorCode = isTroupeError(error) ? error.code : 'TROUPE_MODEL_FAILED';
      if (this.turns.get(claim.turnId) === turn && !this.stopped) {
        this.log.warn({ turnId: claim.turnId, code: errorCode, err: error }, 'generation failed');
        deps.onError?.(
          new TroupeError(
            errorCode as TroupeErrorCode,
            `${deps.avatars.get(claim.avatarId)?.name ?? claim.avatarId}'s answer in ${deps.key} could not be generated: ${describe(error)}`,
            {
              cause: error,
              retryable: isTroupeError(error) ? error.retryable : false,
              details: { channel: deps.channel, turnId: claim.turnId, avatarId: claim.avatarId },
            },
          ),
        );
      }
    }
    // Released meanwhile (dismissed, or the runtime stopped): the avatar says nothing.
    if (this.stopped || this.turns.get(claim.turnId) !== turn) return undefined;
    this.turns.delete(claim.turnId);

    const at = deps.clock.now();
    const request = this.preparationRequest(claim, at);
    const inspecting = deps.inspecting();
    if (errorCode !== undefined) {
      if (inspecting)
        deps.inspect({
          type: 'turn.generation-failed',
          at,
          channelKey: deps.key,
          turnId: claim.turnId,
          avatarId: claim.avatarId,
          code: errorCode,
        });
      this.apply({
        type: 'turn.failed',
        at,
        turnId: claim.turnId,
        reason: `generation failed: ${errorCode}`,
      });
    } else if (generation) {
      if (inspecting)
        deps.inspect({
          type: 'turn.generated',
          at,
          channelKey: deps.key,
          turnId: claim.turnId,
          avatarId: claim.avatarId,
          model: generation.model,
          chars: generation.text.length,
          ...(turn.seen !== undefined ? { seen: turn.seen } : {}),
        });
      this.apply({ type: 'turn.generated', at, turnId: claim.turnId });
    }

    const text = generation ? this.capped(generation.text, claim) : '';
    const prepared = prepareOutgoingResponse(
      errorCode !== undefined
        ? { error: { code: errorCode }, request }
        : generation
          ? {
              generation: generation.voiceRequested ? { text, voiceRequested: true } : { text },
              request,
            }
          : { request },
    );
    const decision = ensureFeedback(prepared, request, isUserRequest(claim));
    const response = decision.response;
    if (!response) {
      if (inspecting)
        deps.inspect({
          type: 'turn.silent',
          at,
          channelKey: deps.key,
          turnId: claim.turnId,
          avatarId: claim.avatarId,
        });
      if (errorCode === undefined)
        this.apply({ type: 'turn.failed', at, turnId: claim.turnId, reason: 'the model wrote nothing' });
      return undefined;
    }
    if (inspecting)
      deps.inspect({
        type: 'response.prepared',
        at,
        channelKey: deps.key,
        idempotencyKey: response.idempotencyKey,
        origin: response.origin.kind,
        guaranteed: decision.guaranteed,
        voice: response.voice !== undefined,
      });
    if (response.origin.kind === 'answer') {
      this.awaiting.set(response.idempotencyKey, {
        claim,
        text: response.text ?? '',
        mentions: generation?.mentions ?? [],
      });
    } else if (errorCode === undefined) {
      // A fallback stands in for a reply the model did not write: the turn itself did not happen.
      this.apply({ type: 'turn.failed', at, turnId: claim.turnId, reason: 'the model wrote nothing' });
    }
    return response;
  }

  /** The model's reply within `maxReplyChars`, clipped at a sentence boundary (and logged) if not. */
  private capped(text: string, claim: TurnClaim): string {
    const max = this.deps.maxReplyChars;
    if (text.length <= max) return text;
    const clipped = clipReply(text, max);
    this.log.info(
      { turnId: claim.turnId, chars: text.length, sent: clipped.length, max },
      'model reply clipped to maxReplyChars',
    );
    return clipped;
  }

  private preparationRequest(claim: TurnClaim, at: number): PreparationRequest {
    const { deps } = this;
    const avatar = deps.avatars.get(claim.avatarId);
    const trigger = claim.triggerMessageId;
    const origin: PreparationRequest['origin'] = { turnId: claim.turnId, avatarId: claim.avatarId };
    if (trigger !== undefined) origin.triggerMessageId = trigger;
    const request: PreparationRequest = {
      idempotencyKey: this.keyFor(claim.turnId),
      channel: deps.channel,
      speaker: deps.cast.speakers.get(claim.avatarId) ?? speakerOf(avatar ?? { id: claim.avatarId }),
      origin,
      inboundVoice: trigger !== undefined && this.voiceNotes?.has(trigger) === true,
      voicePolicy: deps.cast.voicePolicies.get(claim.avatarId) ?? { mode: avatar?.voice ?? 'on-request' },
      at,
    };
    if (trigger !== undefined && claim.kind === 'response') request.replyTo = { messageId: trigger };
    if (avatar?.voiceId !== undefined) request.voiceId = avatar.voiceId;
    if (avatar)
      request.speakerNames = deps.cast.speakerNames.get(claim.avatarId) ?? [
        avatar.name,
        ...(avatar.aliases ?? []),
      ];
    if (claim.context.maxChars !== undefined) request.maxChars = claim.context.maxChars;
    return request;
  }
}

/** How an avatar is shown beside its messages. */
export function speakerOf(avatar: Pick<AvatarDefinition, 'id'> & Partial<AvatarDefinition>): Speaker {
  const speaker: Speaker = { avatarId: avatar.id, name: avatar.name ?? avatar.id };
  if (avatar.emoji !== undefined) speaker.emoji = avatar.emoji;
  const picture = avatar.pictureUrl ?? avatar.avatarUrl;
  if (picture !== undefined) speaker.pictureUrl = picture;
  return speaker;
}

/**
 * Whether a turn answers something a person asked (the feedback guarantee's "non-auto mode"):
 * answers drawn from a person's message budget, except an avatar speaking up on its own
 * initiative. Greetings, follow-ups and avatar-to-avatar cascades are autonomous.
 */
export function isUserRequest(claim: TurnClaim): boolean {
  return claim.lane === 'main' && claim.kind === 'response' && claim.rung !== 'initiative';
}

/** Adds to a set that forgets its oldest entry beyond `limit` (insertion order). */
function remember(set: Set<string>, id: string, limit: number): void {
  set.add(id);
  if (set.size > limit) {
    const oldest = set.values().next().value;
    if (oldest !== undefined) set.delete(oldest);
  }
}
