import type { Observable, Subscription } from 'rxjs';
import type { ComposerConfigOptions } from '../composer/composerConfig.js';
import type { CoordinationConfig, CoordinationConfigInput } from '../config/coordinationConfig.js';
import type { FloorView } from '../floor/channelFloor.js';
import type { Logger } from '../logging/logger.js';
import type { Clock } from '../ports/clock.js';
import type { HistoryStore } from '../ports/history.js';
import type { LookupTool } from '../ports/lookupTool.js';
import type { TurnModel, TurnModelResolver } from '../ports/model.js';
import type { Outbox } from '../ports/outbox.js';
import type { ChannelRef } from '../ports/outgoingResponse.js';
import type { RoutingOutcome } from '../ports/routingOutcome.js';
import type { SpeechSynthesizer } from '../ports/speech.js';
import type { TroupeStore } from '../ports/store.js';
import type { Transport } from '../ports/transport.js';
import type { TroupeError } from '../ports/troupeError.js';
import type { AvatarChange } from './avatarCast.js';
import type { AvatarCreationOptions, CreateAvatarRequest, CreatedAvatar } from './avatarCreator.js';
import type { AvatarDefinition, AvatarDefinitionInput } from './avatarDefinition.js';
import type { InspectionEvent } from './inspectionEvent.js';
import type { RetryPolicy } from './routingActor.js';
import type { UsageLedger } from './usage/usageLedger.js';
import type { PendingWork } from './workTracker.js';

/** Where the runtime keeps what must outlive a response: the outbox and channel history. */
export interface RuntimeStore {
  outbox: Outbox;
  history: HistoryStore;
}

/** How a runtime is made. Everything but `avatars` has an embedded default. */
export interface RuntimeOptions {
  /** The avatars (validated; ids must be unique). */
  avatars: readonly AvatarDefinitionInput[];
  /**
   * Coordination settings; missing keys take the defaults. Validated with the same
   * rules as the environment variables: durations may be written `180000`, `180s` or `3m`.
   */
  config?: CoordinationConfigInput;
  /** The language model. Default: the offline scripted model (the runtime logs once that it is offline). */
  model?: TurnModel;
  /**
   * Builds the models avatars name with `model:`, once per distinct choice, when the runtime
   * starts (e.g. `modelFromEnv(process.env).models` from `troupe/ai-sdk`: providers, keys and
   * profiles from the environment). A choice equal to `model`'s id is `model` itself. Default:
   * only `offline` is known; any other choice is refused as `TROUPE_AVATAR_MODEL_INVALID`.
   */
  models?: TurnModelResolver;
  /** One transport per channel kind. */
  transports?: readonly Transport[];
  /** Text to speech for voice replies; without it, voice requests fall back to text. */
  speech?: SpeechSynthesizer | undefined;
  /**
   * Where state lives: a {@link TroupeStore} (SQLite, MongoDB, memory), or just an outbox and
   * history over an in-memory store. Default: in memory.
   */
  store?: TroupeStore | Partial<RuntimeStore>;
  /** How actor state is persisted and idle actors are dropped from memory. */
  persistence?: PersistenceOptions;
  /** Where the runtime logs (the {@link Logger} port; a pino logger is one). Default: pino, JSON on stderr at `info`. */
  logger?: Logger;
  /** Time. Default: the system clock; tests pass a `SimulatedClock`. */
  clock?: Clock;
  /** How routing retries failed sends. */
  retry?: Partial<RetryPolicy>;
  /**
   * How long one send may take before it is aborted and retried as `TROUPE_TRANSPORT_TIMEOUT`
   * (default 30 s); a transport's `limits.sendTimeoutMs` wins.
   */
  sendTimeoutMs?: number;
  /** How long {@link Runtime.stop} waits for work in flight before it aborts it (default 30 s). */
  stopDeadlineMs?: number;
  /**
   * Summoning a name no avatar has creates one ({@link Runtime.createAvatar}): on or off (default
   * off), how many one person may create per UTC day (default 5), and the model that writes the
   * persona (default: the offline template). Created avatars are kept in the store.
   */
  avatarCreation?: AvatarCreationOptions;
  /**
   * How many recent messages a prompt carries (default 30). An in-memory store must keep at least
   * as many per channel (`createMemoryStore({ historyPerChannel })`; the one made when no store is
   * given does).
   */
  historyLimit?: number;
  /**
   * The longest model reply sent, in characters (default 4,000; `TROUPE_MAX_REPLY_CHARS` in the
   * CLI). A longer reply is clipped at a sentence boundary before it is prepared, and the clip is
   * logged, so a runaway model never floods a channel.
   */
  maxReplyChars?: number;
  /**
   * The lookup tool for avatars with `tools: ['entity_lookup']` (e.g. `createEntityLookup`), and
   * where the composer reads its settings (`env: process.env` to follow changes without restart).
   */
  lookup?: { tool: LookupTool; composer?: ComposerConfigOptions; choiceTtlMs?: number };
  /** Resend unsettled outbox entries on start (default true). */
  recoverOnStart?: boolean;
  /**
   * Where every model call's usage is recorded, and what the daily token and cost caps read.
   * Default: a ledger on this runtime's store priced with the built-in table (the CLI adds
   * `TROUPE_MODEL_PRICES`); `false` records nothing (then daily token and cost caps cannot apply).
   */
  usage?: UsageLedger | false;
}

/** How the runtime persists channel actors. */
export interface PersistenceOptions {
  /** Longest a state change waits before it is written, batched with others (default 250 ms). */
  flushIntervalMs?: number;
  /**
   * Floor events a channel's turn ledger may hold before its whole snapshot is written again
   * (default 256; 0: every write is a whole snapshot). A durable store gets the events applied since
   * the last write instead (a reply's few events, not the whole floor); a restore replays them.
   */
  ledgerLimit?: number;
  /** A channel actor idle this long is written to the store and dropped from memory (default 10 min). */
  passivateAfterMs?: number;
  /** Stored channel state (its presences and threads) untouched this long is deleted (default 14 days). */
  idleExpiryMs?: number;
  /**
   * Whether the store outlives the process (default: true for every store but memory). Then
   * channel state is written behind as it changes, and before a reply is sent; otherwise only
   * when a channel is passivated or retired and when the runtime stops, which is when anything
   * reads it back. Set it on a memory store to simulate a durable one (crash tests).
   */
  durable?: boolean;
  /**
   * With a durable store, how long a channel's lease lasts unless renewed (default 30 s; renewed
   * every third of it while the channel is active). Processes sharing the store take turns per
   * channel: another process takes a channel over only after its lease lapsed.
   */
  leaseTtlMs?: number;
}

/** How {@link Runtime.stop} ends. */
export interface StopOptions {
  /**
   * How long to wait for work in flight (default: the runtime's `stopDeadlineMs`, 30 s). Past it,
   * sends are aborted and their outbox entries left unsettled (the next start sends them), and
   * generations are aborted (their turns stay in flight in the stored floor and are resumed).
   */
  deadlineMs?: number;
}

/**
 * What {@link Runtime.send} says about an event. `handedOver: true`: another process sharing the
 * store holds the event's channel, and the event was stored for it to answer (the write itself
 * happens after `send` returns; a failure of it is reported on `errors$`). It is known at once only
 * once this runtime has met the holder: the first event for a channel it has not tried yet says
 * `{ accepted: true }`, and is handed over when loading the channel finds the lease taken (logged
 * as "another process holds the channel"); the events after it say `handedOver: true`.
 */
export type SendResult = { accepted: true; handedOver?: true } | { accepted: false; error: TroupeError };

/** How {@link Runtime.send} treats an event. */
export interface SendOptions {
  /**
   * Refuse the event (`TROUPE_CHANNEL_OWNED`, on `errors$` and in the result when known at once)
   * when another process holds its channel's lease, instead of handing it over to that process.
   */
  requireOwnership?: boolean;
}

/** A running Troupe runtime. */
export interface Runtime {
  /**
   * Validates and applies one event; invalid events are rejected (also on `errors$`), never thrown.
   * With a store shared by several processes, an event for a channel another process holds is
   * handed over to it (stored for it to answer), unless `options.requireOwnership` is set.
   */
  send(event: unknown, options?: SendOptions): SendResult;
  /** Feeds a stream of inbound events (from a transport adapter) into the runtime. */
  connect(events$: Observable<unknown>): Subscription;
  /** Every routing outcome, as it happens. */
  readonly outcomes$: Observable<RoutingOutcome>;
  /** Floor decisions, turn stages and actor lifecycle, as they happen. */
  readonly inspection$: Observable<InspectionEvent>;
  /** Rejected events and runtime failures, each with a stable code. */
  readonly errors$: Observable<TroupeError>;
  /**
   * The avatars as they are now: those given (validated), then those created by summoning (read
   * from the store at start and kept up to date). A new array after every change.
   */
  readonly avatars: readonly AvatarDefinition[];
  /** Every avatar created or forgotten while the runtime runs (or learned from the store). */
  readonly avatarChanges$: Observable<AvatarChange>;
  /**
   * The avatar called `request.name` (a name or alias, any case), creating it when none is and
   * creation is on: a model writes its persona and emoji (or the offline template does), it is
   * stored, and every channel knows it from then on. `created: false` when it already existed
   * (here, or in another process on the same store). Summon it with an `avatar.summon` event.
   *
   * @throws TroupeError `TROUPE_AVATAR_CREATION_OFF`, `TROUPE_AVATAR_NAME_INVALID`,
   *   `TROUPE_AVATAR_NAME_TAKEN`, `TROUPE_AVATAR_CREATION_LIMIT` (per person per day), or a store
   *   error; `TROUPE_RUNTIME_STOPPED` once stopping.
   */
  createAvatar(request: CreateAvatarRequest): Promise<CreatedAvatar>;
  /**
   * Forgets an avatar created by summoning (by id, name or alias): it leaves every channel and the
   * store. Returns it.
   *
   * @throws TroupeError `TROUPE_AVATAR_UNKNOWN`, or `TROUPE_AVATAR_NOT_CREATED` for an avatar the
   *   runtime was given.
   */
  forgetAvatar(nameOrId: string): Promise<AvatarDefinition>;
  /** The model turns are written with, for avatars that name no model of their own. */
  readonly model: TurnModel;
  /** The model an avatar's turns are written with: its own (`model:`), else {@link Runtime.model}. */
  modelOf(avatarId: string): TurnModel;
  /** The store in use. */
  readonly store: TroupeStore;
  /** The usage ledger every model call is recorded in (undefined with `usage: false`). */
  readonly usage: UsageLedger | undefined;
  /** A picture of a channel's floor, if its actor is active. */
  view(channel: ChannelRef): FloorView | undefined;
  /** Activates a channel (loading it from the store) and resolves with its floor's picture. */
  open(channel: ChannelRef): Promise<FloorView>;
  /** Channel actors currently active. */
  activeChannels(): string[];
  /** Resolves when no generation, send or history write is in flight. */
  whenIdle(): Promise<void>;
  /** Work in flight right now (generations, sends, writes). */
  readonly inFlight: number;
  /**
   * Every unit of work in flight, oldest first: what it is (a turn, a reply, a write; its channel
   * and avatar), what it waits for now (the model, the store, the transport, the lookup tool,
   * speech, recovery), for how long, and whether that wait leaves the process (`external`: a
   * network model, a real transport, a networked store, or any port that does not say it is
   * `local`) or always ends (the offline model, a memory or SQLite store, an in-process database,
   * the terminal or recording transport). Settling on a simulated clock is built on it.
   */
  pending(): PendingWork[];
  /**
   * Calls `listener` whenever a unit of work ends or changes what it waits for (the idle signal
   * settling sleeps on); returns the unsubscribe.
   */
  onProgress(listener: () => void): () => void;
  /**
   * Stops accepting events, waits for in-flight generations and sends (the outbox drained) up to
   * a deadline, aborts what is still in flight then, writes every channel and stops every actor.
   * Idempotent (the first call's options apply).
   */
  stop(options?: StopOptions): Promise<void>;
}

/**
 * What the runtime core runs on once the entry point has chosen every default: a model, a whole
 * store and a validated coordination config.
 */
export type ResolvedRuntimeOptions = Omit<RuntimeOptions, 'model' | 'models' | 'store' | 'config'> & {
  model: TurnModel;
  models: TurnModelResolver;
  store: TroupeStore;
  config: CoordinationConfig;
};
