import { randomUUID } from 'node:crypto';
import { filter, type Observable, Subject, type Subscription } from 'rxjs';
import type { TurnModel } from '../adapters/llm/languageModelPort.js';
import { createScriptedModel } from '../adapters/llm/scriptedModel.js';
import { MemoryHistory } from '../adapters/store/memoryHistory.js';
import { MemoryOutbox } from '../adapters/store/memoryOutbox.js';
import type { Transport } from '../adapters/transport/transport.js';
import type { SpeechSynthesizer } from '../adapters/voice/speechSynthesizer.js';
import { type CoordinationConfig, defaultCoordinationConfig } from '../config/coordinationConfig.js';
import { TroupeError } from '../errors/troupeError.js';
import { createLogger, type Logger } from '../logging/logger.js';
import { ChannelFloor, type FloorView } from '../machines/channelFloor.js';
import { ActorRegistry } from './actorRegistry.js';
import {
  type AvatarDefinition,
  type AvatarDefinitionInput,
  avatarListSchema,
  toProfile,
} from './avatarDefinition.js';
import { ChannelActor } from './channelActor.js';
import { type Clock, systemClock } from './clock.js';
import type { HistoryStore } from './historyStore.js';
import type { InspectionEvent } from './inspectionEvent.js';
import type { Outbox } from './outbox.js';
import type { ChannelRef } from './outgoingResponse.js';
import { prepareOutgoingResponse } from './preparation.js';
import { type RetryPolicy, RoutingActor } from './routingActor.js';
import type { RoutingOutcome } from './routingOutcome.js';
import { type RuntimeEvent, runtimeEventSchema } from './runtimeEvents.js';
import { TurnExecutor } from './turnExecutor.js';
import { WorkTracker } from './workTracker.js';

/** Where the runtime keeps what must outlive a response: the outbox and channel history. */
export interface RuntimeStore {
  outbox: Outbox;
  history: HistoryStore;
}

/** How a runtime is made. Everything but `avatars` has an embedded default. */
export interface RuntimeOptions {
  /** The avatars (validated; ids must be unique). */
  avatars: readonly AvatarDefinitionInput[];
  /** Coordination settings (seed 003); missing keys take the defaults. */
  config?: Partial<CoordinationConfig>;
  /** The language model. Default: the offline scripted model (the runtime logs once that it is offline). */
  model?: TurnModel;
  /** One transport per channel kind. */
  transports?: readonly Transport[];
  /** Text to speech for voice replies; without it, voice requests fall back to text. */
  speech?: SpeechSynthesizer;
  /** Outbox and history. Default: in memory. */
  store?: Partial<RuntimeStore>;
  /** pino logger. Default: JSON on stderr at `info`. */
  logger?: Logger;
  /** Time. Default: the system clock; tests pass a `SimulatedClock`. */
  clock?: Clock;
  /** How routing retries failed sends. */
  retry?: Partial<RetryPolicy>;
  /** How many recent messages a prompt carries (default 30). */
  historyLimit?: number;
  /** Resend unsettled outbox entries on start (default true). */
  recoverOnStart?: boolean;
}

/** What {@link Runtime.send} says about an event. */
export type SendResult = { accepted: true } | { accepted: false; error: TroupeError };

/** A running Troupe runtime. */
export interface Runtime {
  /** Validates and applies one event; invalid events are rejected (also on `errors$`), never thrown. */
  send(event: unknown): SendResult;
  /** Feeds a stream of inbound events (from a transport adapter) into the runtime. */
  connect(events$: Observable<unknown>): Subscription;
  /** Every routing outcome, as it happens. */
  readonly outcomes$: Observable<RoutingOutcome>;
  /** Floor decisions, turn stages and actor lifecycle, as they happen. */
  readonly inspection$: Observable<InspectionEvent>;
  /** Rejected events and runtime failures, each with a stable code. */
  readonly errors$: Observable<TroupeError>;
  /** The avatars, validated. */
  readonly avatars: readonly AvatarDefinition[];
  /** The model turns are written with. */
  readonly model: TurnModel;
  /** The store in use. */
  readonly store: RuntimeStore;
  /** A picture of a channel's floor, if its actor is active. */
  view(channel: ChannelRef): FloorView | undefined;
  /** Channel actors currently active. */
  activeChannels(): string[];
  /** Resolves when no generation, send or history write is in flight. */
  whenIdle(): Promise<void>;
  /** Work in flight right now (generations, sends, writes). */
  readonly inFlight: number;
  /**
   * Stops accepting events, waits for in-flight generations and sends (the outbox drained), then
   * stops every actor. Idempotent.
   */
  stop(): Promise<void>;
}

/** The key of a channel: `kind:id`. */
export function channelKey(channel: ChannelRef): string {
  return `${channel.kind}:${channel.id}`;
}

/**
 * Creates a runtime: one actor per channel in a registry, a routing actor over the transports,
 * the turn executor over the model and history, all wired by RxJS streams.
 *
 * @example
 * ```ts
 * const runtime = createRuntime({ avatars, transports: [myTransport] });
 * runtime.outcomes$.subscribe((o) => console.log(o.sent, o.parts));
 * runtime.send({ type: 'channel.message', channel: { kind: 'discord', id: '42' }, messageId: 'm1',
 *   author: { kind: 'human', id: 'u1', name: 'Ada' }, text: 'Hello @Nova' });
 * await runtime.stop();
 * ```
 * @throws TroupeError `TROUPE_AVATARS_INVALID` when the avatar list does not validate.
 */
export function createRuntime(options: RuntimeOptions): Runtime {
  const parsedAvatars = avatarListSchema.safeParse(options.avatars);
  if (!parsedAvatars.success) {
    throw new TroupeError(
      'TROUPE_AVATARS_INVALID',
      `The avatar definitions are invalid: ${parsedAvatars.error.issues
        .map((i) => `avatars.${i.path.join('.')}: ${i.message}`)
        .join('; ')}`,
    );
  }
  const avatars = parsedAvatars.data;
  const avatarsById = new Map(avatars.map((a) => [a.id, a]));
  const roster = avatars.map(toProfile);
  const config: CoordinationConfig = { ...defaultCoordinationConfig, ...options.config };
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? createLogger();
  const model = options.model ?? createScriptedModel();
  const store: RuntimeStore = {
    outbox: options.store?.outbox ?? new MemoryOutbox(),
    history: options.store?.history ?? new MemoryHistory(),
  };
  const instanceId = randomUUID().slice(0, 8);
  const tracker = new WorkTracker();
  const registry = new ActorRegistry<ChannelActor>();
  const inspection$ = new Subject<InspectionEvent>();
  const errors$ = new Subject<TroupeError>();
  const routing = new RoutingActor({
    transports: options.transports ?? [],
    outbox: store.outbox,
    clock,
    logger: logger.child({ actor: 'routing' }),
    ...(options.speech ? { speech: options.speech } : {}),
    ...(options.retry ? { retry: options.retry } : {}),
  });
  const executor = new TurnExecutor({
    model,
    history: store.history,
    ...(options.historyLimit !== undefined ? { historyLimit: options.historyLimit } : {}),
  });
  let stopping: Promise<void> | undefined;

  if (model.offline) {
    logger.info(
      { model: model.id },
      'no language model configured: avatars answer with the offline scripted model (set TROUPE_MODEL_PROVIDER or OPENAI_API_KEY to use a real one)',
    );
  } else {
    logger.info({ model: model.id }, 'language model configured');
  }

  // Residents by channel, so a channel with residents starts with them present.
  const residents = new Map<string, { channel: ChannelRef; ids: string[] }>();
  for (const avatar of avatars) {
    for (const spec of avatar.residentIn) {
      const split = spec.indexOf(':');
      const channel = { kind: spec.slice(0, split), id: spec.slice(split + 1) };
      const key = channelKey(channel);
      const entry = residents.get(key) ?? { channel, ids: [] };
      entry.ids.push(avatar.id);
      residents.set(key, entry);
    }
  }

  const inspect = (event: InspectionEvent) => inspection$.next(event);

  const activate = (channel: ChannelRef): ChannelActor => {
    const key = channelKey(channel);
    const { actor, created } = registry.activate(key, () => {
      const present = residents.get(key)?.ids ?? [];
      return new ChannelActor({
        channel,
        key,
        floor: new ChannelFloor({ channelId: key, config, roster, present, at: clock.now() }),
        avatars: avatarsById,
        hasResidents: present.length > 0,
        config,
        clock,
        executor,
        routing,
        tracker,
        logger: logger.child({ channel: key }),
        inspect,
        instanceId,
      });
    });
    if (created) inspect({ type: 'actor.activated', at: clock.now(), channelKey: key });
    return actor;
  };

  const retireIfFinished = (actor: ChannelActor) => {
    if (!actor.isFinished()) return;
    registry.stop(actor.key);
    inspect({ type: 'actor.stopped', at: clock.now(), channelKey: actor.key, reason: 'finished' });
  };

  const reject = (error: TroupeError): SendResult => {
    logger.warn({ code: error.code }, error.message);
    errors$.next(error);
    return { accepted: false, error };
  };

  const outcomeSubscription = routing.outcomes$.subscribe((outcome) => {
    inspect({ type: 'routing.outcome', at: outcome.at, outcome });
    if (outcome.error && outcome.attempted === false && outcome.error.code !== 'TROUPE_RESPONSE_EMPTY') {
      errors$.next(
        new TroupeError(outcome.error.code, outcome.error.message, { retryable: outcome.error.retryable }),
      );
    }
    const actor = registry.get(channelKey(outcome.channel));
    if (!actor) return;
    actor.onOutcome(outcome);
    retireIfFinished(actor);
  });

  const send = (input: unknown): SendResult => {
    if (stopping)
      return reject(
        new TroupeError('TROUPE_RUNTIME_STOPPED', 'The runtime is stopping and accepts no more events.'),
      );
    const parsed = runtimeEventSchema.safeParse(input);
    if (!parsed.success) {
      const type =
        typeof input === 'object' && input !== null ? (input as { type?: unknown }).type : undefined;
      return reject(
        new TroupeError(
          'TROUPE_EVENT_INVALID',
          `Rejected ${typeof type === 'string' ? `a "${type}"` : 'an'} event: ${parsed.error.issues
            .map((i) => `${i.path.join('.') || '(event)'}: ${i.message}`)
            .join('; ')}`,
          { details: { type } },
        ),
      );
    }
    const event = parsed.data as RuntimeEvent;
    const at = event.at ?? clock.now();
    if (event.type === 'response.send') {
      // Upstream already decided: preparation leaves it alone and routing sends it.
      const response = prepareOutgoingResponse({
        existing: event.response,
        request: {
          idempotencyKey: event.response.idempotencyKey,
          channel: event.response.channel,
          origin: {},
          voicePolicy: { mode: 'off' },
          at,
        },
      });
      if (response) tracker.track(routing.route(response));
      return { accepted: true };
    }
    if (
      (event.type === 'avatar.summon' || event.type === 'avatar.dismiss') &&
      !avatarsById.has(event.avatarId)
    ) {
      return reject(
        new TroupeError(
          'TROUPE_AVATAR_UNKNOWN',
          `No avatar has id "${event.avatarId}"; known ids: ${[...avatarsById.keys()].join(', ')}.`,
        ),
      );
    }
    const actor = activate(event.channel);
    actor.receive({ ...event, at });
    retireIfFinished(actor);
    return { accepted: true };
  };

  if (options.recoverOnStart ?? true) {
    tracker.track(
      routing.recover().catch((error: unknown) => {
        const failure = new TroupeError(
          'TROUPE_OUTBOX_UNAVAILABLE',
          'Could not read the outbox to resend unsettled responses.',
          {
            retryable: true,
            cause: error,
          },
        );
        logger.error({ code: failure.code }, failure.message);
        errors$.next(failure);
        return [];
      }),
    );
  }

  return {
    send,
    connect(events$) {
      return events$.subscribe({
        next: (event) => {
          send(event);
        },
        error: (error: unknown) =>
          reject(
            new TroupeError('TROUPE_STREAM_FAILED', 'An inbound event stream failed and was disconnected.', {
              cause: error,
            }),
          ),
      });
    },
    outcomes$: routing.outcomes$.asObservable(),
    inspection$: inspection$.asObservable(),
    errors$: errors$.asObservable(),
    avatars,
    model,
    store,
    view: (channel) => registry.get(channelKey(channel))?.view(),
    activeChannels: () => [...registry.keys()],
    whenIdle: () => tracker.drained(),
    get inFlight() {
      return tracker.active;
    },
    stop() {
      stopping ??= (async () => {
        await tracker.drained();
        for (const key of registry.stopAll())
          inspect({ type: 'actor.stopped', at: clock.now(), channelKey: key, reason: 'runtime-stopped' });
        outcomeSubscription.unsubscribe();
        inspection$.complete();
        errors$.complete();
        routing.outcomes$.complete();
      })();
      return stopping;
    },
  };
}

/** Inspection events of one type, typed. */
export function inspectionOf<T extends InspectionEvent['type']>(
  stream: Observable<InspectionEvent>,
  type: T,
): Observable<Extract<InspectionEvent, { type: T }>> {
  return stream.pipe(filter((e): e is Extract<InspectionEvent, { type: T }> => e.type === type));
}
