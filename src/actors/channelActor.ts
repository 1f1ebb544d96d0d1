import type { CoordinationConfig } from '../config/coordinationConfig.js';
import { ensureFeedback } from '../delivery/feedbackGuarantee.js';
import { type PreparationRequest, prepareOutgoingResponse } from '../delivery/preparation.js';
import type { Logger } from '../logging/logger.js';
import type { ChannelFloor, FloorView } from '../machines/channelFloor.js';
import { FloorDriver, type TurnRelease } from '../machines/floorDriver.js';
import type { FloorEffect, FloorEvent, TurnClaim } from '../machines/floorTypes.js';
import type { Clock } from '../ports/clock.js';
import type { TurnGenerationResult } from '../ports/model.js';
import type { Outbox } from '../ports/outbox.js';
import type { ChannelRef } from '../ports/outgoingResponse.js';
import type { RoutingOutcome } from '../ports/routingOutcome.js';
import { isTroupeError } from '../ports/troupeError.js';
import type { AvatarDefinition } from './avatarDefinition.js';
import type { ChannelDocument, ChannelPersistence } from './channelPersistence.js';
import type { InspectionEvent } from './inspectionEvent.js';
import type { RoutingActor } from './routingActor.js';
import type { RuntimeEvent } from './runtimeEvents.js';
import type { TurnExecutor } from './turnExecutor.js';
import type { WorkTracker } from './workTracker.js';

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
  logger: Logger;
  inspect: (event: InspectionEvent) => void;
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
}

interface TurnInFlight {
  claim: TurnClaim;
  abort: AbortController;
}

interface AwaitedAnswer {
  claim: TurnClaim;
  text: string;
  mentions: string[];
}

/** How many inbound voice-note ids a channel remembers (to answer in kind). */
const VOICE_NOTES_REMEMBERED = 256;
/** How many inbound message ids a channel remembers to drop redeliveries (gateways resend). */
const MESSAGES_REMEMBERED = 1024;
/** How many of them are stored with the channel (a redelivery after a restart is recent). */
const MESSAGES_STORED = 100;

/**
 * One actor per channel: it owns the channel's {@link ChannelFloor} and serialises every decision
 * about the channel (events arrive one at a time; the floor is synchronous). For each claimed
 * turn it runs the pipeline generation → preparation → feedback guarantee → routing, and feeds
 * the routing outcome back to the floor as `turn.delivered` or `turn.failed`. Channels are
 * independent actors, so their generations and sends run concurrently.
 */
export class ChannelActor {
  private readonly turns = new Map<string, TurnInFlight>();
  private readonly awaiting = new Map<string, AwaitedAnswer>();
  private readonly voiceNotes = new Set<string>();
  private readonly seenMessages = new Set<string>();
  private stopped = false;
  private floor: ChannelFloor | undefined;
  /** Applies events to the floor, acts on its effects and keeps its tick armed (set with the floor). */
  private driver: FloorDriver | undefined;
  /** Work that arrived while the channel was loading, in order. */
  private mailbox: (() => void)[] = [];
  private lastActivity: number;

  constructor(private readonly deps: ChannelActorDeps) {
    this.lastActivity = deps.clock.now();
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
      onEffect: (effect) => this.onEffect(effect),
      onClaim: (turn) => this.startTurn(turn),
      onRelease: (release) => this.abortTurn(release),
      onApplied: () => this.deps.persistence?.markDirty(this.deps.key, () => this.document()),
    });
    for (const id of start.seen ?? []) remember(this.seenMessages, id, MESSAGES_REMEMBERED);
    if (start.restored) await this.resumeInFlight();
    const queued = this.mailbox;
    this.mailbox = [];
    for (const work of queued) work();
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
    return this.ready && this.turns.size === 0 && this.awaiting.size === 0 && this.mailbox.length === 0;
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
    // Turns in flight must resume as soon as a restarted runtime can: wake at once.
    const wakeAt = snapshot.inFlight.length > 0 ? snapshot.now : floor.nextDeadline();
    const seen = [...this.seenMessages].slice(-MESSAGES_STORED);
    return { document: { floor: snapshot, spoken, seen }, wakeAt };
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
        this.deps.logger.info(
          { turnId: claim.turnId },
          'resuming a turn that was in flight when the process stopped',
        );
        this.startTurn(claim);
      } else if (entry.settled?.sent) {
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
          at,
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
        this.deps.tracker.track(this.deps.routing.resume(entry));
      }
    }
  }

  /** The channel's key (`kind:id`). */
  get key(): string {
    return this.deps.key;
  }

  /** Applies one inbound event (already validated and stamped with a time). */
  receive(event: RuntimeEvent & { at: number }): void {
    if (this.stopped) return;
    if (!this.floor) {
      this.mailbox.push(() => this.receive(event));
      return;
    }
    this.lastActivity = this.deps.clock.now();
    switch (event.type) {
      case 'channel.message': {
        if (this.seenMessages.has(event.messageId)) {
          this.deps.logger.debug({ messageId: event.messageId }, 'message already seen; ignored');
          return;
        }
        remember(this.seenMessages, event.messageId, MESSAGES_REMEMBERED);
        if (event.voice) remember(this.voiceNotes, event.messageId, VOICE_NOTES_REMEMBERED);
        const author = event.author;
        const name =
          author.kind === 'human' ? author.name : (this.deps.avatars.get(author.id)?.name ?? author.id);
        this.deps.tracker.track(
          this.deps.executor
            .recordInbound({
              channelId: this.deps.key,
              messageId: event.messageId,
              at: event.at,
              author: { kind: author.kind, id: author.id, name },
              text: event.text,
            })
            .catch((error: unknown) => this.deps.logger.warn({ err: error }, 'history write failed')),
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

  /** A routing outcome for a response this channel prepared. */
  onOutcome(outcome: RoutingOutcome): void {
    if (this.stopped) return;
    if (!this.floor) {
      this.mailbox.push(() => this.onOutcome(outcome));
      return;
    }
    this.lastActivity = this.deps.clock.now();
    const awaited = this.awaiting.get(outcome.idempotencyKey);
    if (!awaited) return;
    this.awaiting.delete(outcome.idempotencyKey);
    const { claim } = awaited;
    const at = this.deps.clock.now();
    const first = outcome.parts[0];
    if (outcome.sent && first) {
      const avatar = this.deps.avatars.get(claim.avatarId);
      this.deps.tracker.track(
        this.deps.executor
          .recordDelivered({
            channelId: this.deps.key,
            messageId: first.messageId,
            at,
            author: { kind: 'avatar', id: claim.avatarId, name: avatar?.name ?? claim.avatarId },
            text: awaited.text,
          })
          .catch((error: unknown) => this.deps.logger.warn({ err: error }, 'history write failed')),
      );
      const addressee = claim.context.addressedById;
      if (addressee !== undefined && addressee !== claim.avatarId)
        this.deps.tracker.track(
          this.deps.executor
            .recordExchange({
              speakerId: claim.avatarId,
              addresseeId: addressee,
              channelKey: this.deps.key,
              text: awaited.text,
              at,
            })
            .catch((error: unknown) => this.deps.logger.warn({ err: error }, 'relationship write failed')),
        );
      this.apply({
        type: 'turn.delivered',
        at,
        turnId: claim.turnId,
        messageId: first.messageId,
        text: awaited.text,
        ...(awaited.mentions.length > 0 ? { mentions: awaited.mentions } : {}),
      });
    } else {
      this.apply({
        type: 'turn.failed',
        at,
        turnId: claim.turnId,
        reason: `not delivered: ${outcome.error?.code ?? 'unknown'}`,
      });
    }
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

  /** Cancels timers and in-flight generations; the actor accepts nothing afterwards. */
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

  private onEffect(effect: FloorEffect): void {
    this.deps.inspect({ type: 'floor.effect', at: effect.at, channelKey: this.deps.key, effect });
    if (effect.type === 'event.rejected')
      this.deps.logger.info({ channel: this.deps.key, code: effect.code }, effect.message);
  }

  private abortTurn(release: TurnRelease): void {
    const turn = this.turns.get(release.turnId);
    this.turns.delete(release.turnId);
    turn?.abort.abort(new Error(`turn released: ${release.reason}`));
  }

  private startTurn(claim: TurnClaim): void {
    const abort = new AbortController();
    this.turns.set(claim.turnId, { claim, abort });
    this.deps.tracker.track(
      this.runTurn(claim, abort.signal).catch((error: unknown) => {
        // The pipeline handles every expected failure; this is a bug guard that keeps the floor sane.
        this.deps.logger.error({ err: error, turnId: claim.turnId }, 'turn pipeline crashed');
        if (this.turns.delete(claim.turnId))
          this.apply({
            type: 'turn.failed',
            at: this.deps.clock.now(),
            turnId: claim.turnId,
            reason: 'internal error',
          });
      }),
    );
  }

  private async runTurn(claim: TurnClaim, signal: AbortSignal): Promise<void> {
    const { deps } = this;
    const avatar = deps.avatars.get(claim.avatarId);
    const profile = avatar ?? { id: claim.avatarId, name: claim.avatarId };
    let generation: TurnGenerationResult | undefined;
    let errorCode: string | undefined;
    try {
      generation = await deps.executor.generate({
        channelKey: deps.key,
        avatar: profile,
        turn: claim,
        situation: {
          avatarIds: [...deps.avatars.keys()],
          avatarNames: [...deps.avatars.values()].flatMap((a) => [a.name, ...(a.aliases ?? [])]),
          spokenInThread:
            claim.threadId !== undefined
              ? (this.driver?.spokenInThread(claim.threadId, claim.avatarId) ?? 0)
              : 0,
          greetingMaxChars: claim.context.maxChars ?? deps.config.greetingMaxChars,
        },
        signal,
      });
    } catch (error) {
      errorCode = isTroupeError(error) ? error.code : 'TROUPE_MODEL_FAILED';
      if (!signal.aborted)
        deps.logger.warn(
          { channel: deps.key, turnId: claim.turnId, code: errorCode, err: error },
          'generation failed',
        );
    }
    // Released meanwhile (dismissed, or the runtime stopped): the avatar says nothing.
    if (signal.aborted || this.stopped || !this.turns.has(claim.turnId)) return;
    this.turns.delete(claim.turnId);

    const at = deps.clock.now();
    const request = this.preparationRequest(claim, at);
    if (errorCode !== undefined) {
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
      deps.inspect({
        type: 'turn.generated',
        at,
        channelKey: deps.key,
        turnId: claim.turnId,
        avatarId: claim.avatarId,
        model: generation.model,
        chars: generation.text.length,
      });
      this.apply({ type: 'turn.generated', at, turnId: claim.turnId });
    }

    const prepared = prepareOutgoingResponse({
      ...(generation
        ? {
            generation: {
              text: generation.text,
              ...(generation.voiceRequested ? { voiceRequested: true } : {}),
            },
          }
        : {}),
      ...(errorCode !== undefined ? { error: { code: errorCode } } : {}),
      request,
    });
    const decision = ensureFeedback(prepared, request, isUserRequest(claim));
    const response = decision.response;
    if (!response) {
      deps.inspect({
        type: 'turn.silent',
        at,
        channelKey: deps.key,
        turnId: claim.turnId,
        avatarId: claim.avatarId,
      });
      if (errorCode === undefined)
        this.apply({ type: 'turn.failed', at, turnId: claim.turnId, reason: 'the model wrote nothing' });
      return;
    }
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
    // The stored floor must know the turn before the outbox does (a restart then resumes it).
    // A store that does not outlive the process has no restart to prepare for.
    if (deps.durable) await deps.persistence?.flush([deps.key]).catch(() => undefined);
    await deps.routing.route(response);
  }

  private preparationRequest(claim: TurnClaim, at: number): PreparationRequest {
    const avatar = this.deps.avatars.get(claim.avatarId);
    const trigger = claim.triggerMessageId;
    return {
      idempotencyKey: this.keyFor(claim.turnId),
      channel: this.deps.channel,
      speaker: {
        avatarId: claim.avatarId,
        name: avatar?.name ?? claim.avatarId,
        ...(avatar?.emoji !== undefined ? { emoji: avatar.emoji } : {}),
        ...(avatar?.pictureUrl !== undefined ? { pictureUrl: avatar.pictureUrl } : {}),
      },
      ...(trigger !== undefined && claim.kind === 'response' ? { replyTo: { messageId: trigger } } : {}),
      origin: {
        turnId: claim.turnId,
        avatarId: claim.avatarId,
        ...(trigger !== undefined ? { triggerMessageId: trigger } : {}),
      },
      inboundVoice: trigger !== undefined && this.voiceNotes.has(trigger),
      ...(avatar?.voiceId !== undefined ? { voiceId: avatar.voiceId } : {}),
      voicePolicy: { mode: avatar?.voice ?? 'on-request' },
      ...(avatar ? { speakerNames: [avatar.name, ...(avatar.aliases ?? [])] } : {}),
      ...(claim.context.maxChars !== undefined ? { maxChars: claim.context.maxChars } : {}),
      at,
    };
  }
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
