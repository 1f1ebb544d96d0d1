import type { AvatarDefinitionInput } from '../actors/avatarDefinition.js';
import type { SimulatedClock } from '../actors/clock.js';
import type { InspectionEvent } from '../actors/inspectionEvent.js';
import type { RetryPolicy } from '../actors/routingActor.js';
import type { PersistenceOptions, Runtime, RuntimeOptions } from '../actors/runtimeOptions.js';
import { MemoryHistory } from '../adapters/store/memory/memoryHistory.js';
import { MemoryOutbox } from '../adapters/store/memory/memoryOutbox.js';
import { createSimulatedRuntime } from '../app/simulatedRuntime.js';
import { ConfigError } from '../config/configError.js';
import type { CoordinationConfig } from '../config/coordinationConfig.js';
import { type Logger, silentLogger } from '../logging/logger.js';
import type { TurnModel, TurnModelResolver } from '../ports/model.js';
import type { Outbox } from '../ports/outbox.js';
import type { RoutingOutcome } from '../ports/routingOutcome.js';
import type { SpeechSynthesizer } from '../ports/speech.js';
import type { TroupeStore } from '../ports/store.js';
import type { Transport } from '../ports/transport.js';
import type { TroupeError } from '../ports/troupeError.js';
import { RecordingTransport } from './recordingTransport.js';

/** How a test runtime is made; everything has a deterministic default. */
export interface TestRuntimeOptions {
  avatars?: readonly AvatarDefinitionInput[];
  config?: Partial<CoordinationConfig>;
  /** Default: the offline scripted model. */
  model?: TurnModel;
  /** Builds the models avatars name with `model:` (see `RuntimeOptions.models`). Default: only `offline`. */
  models?: TurnModelResolver;
  /** Default: one {@link RecordingTransport} of kind `test`. */
  transports?: readonly Transport[];
  speech?: SpeechSynthesizer;
  /** A whole store (e.g. one shared with a runtime that "crashed"); overrides `outbox`/`history`. */
  store?: TroupeStore;
  outbox?: Outbox;
  history?: MemoryHistory;
  persistence?: PersistenceOptions;
  /** The lookup tool for avatars with `tools: ['entity_lookup']`. */
  lookup?: RuntimeOptions['lookup'];
  retry?: Partial<RetryPolicy>;
  /** How long one send may take before it is aborted (default 30 s of simulated time). */
  sendTimeoutMs?: number;
  /** How long `runtime.stop()` waits for work in flight (default 30 s of simulated time). */
  stopDeadlineMs?: number;
  /** Start of simulated time (epoch ms). */
  startAt?: number;
  logger?: Logger;
  /** The channel `say`, `summon` and `dismiss` use by default (default `test:room`). */
  channel?: { kind: string; id: string };
  recoverOnStart?: boolean;
  /** Where model calls' usage is recorded (see `RuntimeOptions.usage`). Default: a ledger on the store. */
  usage?: RuntimeOptions['usage'];
  /** Whether summoning creates avatars (see `RuntimeOptions.avatarCreation`). Default off. */
  avatarCreation?: RuntimeOptions['avatarCreation'];
  /**
   * How long `settle()` waits for one wait outside the process (a network model, a real
   * transport, a networked store; any port not marked `local`) that does not answer before it
   * fails naming it: default 60 s of wall time. Work inside the process (the offline model,
   * memory and SQLite stores, the recording transport, the embedded demo ERP) is waited for
   * however long it takes: on a loaded machine it is only slow.
   */
  settleLimitMs?: number;
  /**
   * Keep only the last `retain` outcomes, inspection events and errors (and the default
   * transport's last `retain` messages): a bounded mode for long runs and soaks. Default: all.
   * With 0, inspection events are not even built.
   */
  retain?: number;
}

/** A runtime on simulated time with everything recorded. */
export interface TestRuntime {
  runtime: Runtime;
  clock: SimulatedClock;
  /** The default recording transport (kind `test`), also the first of `transports` when none given. */
  transport: RecordingTransport;
  /** The history, when it is the in-memory one (the default). */
  history: MemoryHistory;
  outbox: Outbox;
  store: TroupeStore;
  /** Every routing outcome so far (the last `retain`, when set). */
  outcomes: RoutingOutcome[];
  /** Every inspection event so far (the last `retain`, when set). */
  inspection: InspectionEvent[];
  /** Every rejected event or runtime error so far (the last `retain`, when set). */
  errors: TroupeError[];
  /** A person writes in the channel; resolves once everything that can happen without time passing has. */
  say(
    text: string,
    options?: {
      as?: { id: string; name: string };
      messageId?: string;
      mentions?: string[];
      replyTo?: { messageId: string; avatarId?: string };
      voice?: boolean;
      channel?: { kind: string; id: string };
    },
  ): Promise<string>;
  summon(avatarId: string, by?: { id: string; name: string }): Promise<void>;
  dismiss(avatarId: string): Promise<void>;
  /**
   * Lets in-flight work finish without moving time: resolves once every unit of work is parked
   * on the simulated clock or done (see `runtime.pending()`).
   *
   * @throws TroupeError `TROUPE_TEST_NOT_SETTLED` naming each external wait that went unanswered
   *   for `settleLimitMs` of wall time.
   */
  settle(): Promise<void>;
  /** Moves simulated time forward by `ms`, firing every timer due on the way and settling after each. */
  advance(ms: number): Promise<void>;
  /** Stops the runtime (after settling). */
  stop(): Promise<void>;
}

/** A few avatars for quick tests. */
export const testAvatars: AvatarDefinitionInput[] = [
  {
    id: 'nova',
    name: 'Nova',
    emoji: '🌟',
    persona: 'A dreamy astronomer who names comets.',
    topics: ['stars', 'comets'],
  },
  {
    id: 'rex',
    name: 'Rex',
    emoji: '🦖',
    persona: 'A retired T. rex who runs a bakery.',
    topics: ['bread', 'baking'],
  },
  {
    id: 'ivy',
    name: 'Ivy',
    emoji: '🌿',
    persona: 'A botanist who talks to ferns.',
    topics: ['plants', 'gardens'],
  },
];

/**
 * A runtime for tests (Troupe's own, and yours): simulated clock, in-memory store, the offline
 * scripted model and a recording transport. Deterministic: the same calls give the same deliveries.
 *
 * @example
 * ```ts
 * const t = createTestRuntime();
 * await t.summon('nova');
 * await t.say('Nova, what is that comet?');
 * expect(t.transport.texts()).toHaveLength(2);
 * ```
 */
export function createTestRuntime(options: TestRuntimeOptions = {}): TestRuntime {
  const retain = options.retain;
  if (retain !== undefined && !(Number.isInteger(retain) && retain >= 0))
    throw new ConfigError([
      { variable: 'retain', value: String(retain), expected: 'a whole number, 0 or more' },
    ]);
  const transport = new RecordingTransport(retain !== undefined ? { retain } : {});
  const history =
    options.store?.history instanceof MemoryHistory
      ? options.store.history
      : (options.history ?? new MemoryHistory());
  const outbox = options.store?.outbox ?? options.outbox ?? new MemoryOutbox();
  const channel = options.channel ?? { kind: 'test', id: 'room' };
  const simulated = createSimulatedRuntime({
    ...(options.startAt !== undefined ? { startAt: options.startAt } : {}),
    ...(options.settleLimitMs !== undefined ? { settleLimitMs: options.settleLimitMs } : {}),
    avatars: options.avatars ?? testAvatars,
    ...(options.config ? { config: options.config } : {}),
    ...(options.model ? { model: options.model } : {}),
    ...(options.models ? { models: options.models } : {}),
    transports: options.transports ?? [transport],
    ...(options.speech ? { speech: options.speech } : {}),
    store: options.store ?? { outbox, history },
    ...(options.persistence ? { persistence: options.persistence } : {}),
    ...(options.lookup ? { lookup: options.lookup } : {}),
    logger: options.logger ?? silentLogger(),
    ...(options.retry ? { retry: options.retry } : {}),
    ...(options.sendTimeoutMs !== undefined ? { sendTimeoutMs: options.sendTimeoutMs } : {}),
    ...(options.stopDeadlineMs !== undefined ? { stopDeadlineMs: options.stopDeadlineMs } : {}),
    ...(options.recoverOnStart !== undefined ? { recoverOnStart: options.recoverOnStart } : {}),
    ...(options.usage !== undefined ? { usage: options.usage } : {}),
    ...(options.avatarCreation ? { avatarCreation: options.avatarCreation } : {}),
  });
  const { runtime, clock, settle } = simulated;
  const outcomes: RoutingOutcome[] = [];
  const inspection: InspectionEvent[] = [];
  const errors: TroupeError[] = [];
  const keep = <T>(list: T[], item: T) => {
    if (retain === 0) return;
    list.push(item);
    // Drop in batches: amortised O(1), and never more than twice `retain` held.
    if (retain !== undefined && list.length >= retain * 2) list.splice(0, list.length - retain);
  };
  runtime.outcomes$.subscribe((o) => keep(outcomes, o));
  // Subscribing makes the runtime build inspection events: not when none are kept.
  if (retain !== 0) runtime.inspection$.subscribe((e) => keep(inspection, e));
  runtime.errors$.subscribe((e) => keep(errors, e));

  let messageSeq = 0;
  const send = (event: unknown) => {
    const result = runtime.send(event);
    if (!result.accepted) throw result.error;
  };

  return {
    runtime,
    clock,
    transport,
    history,
    outbox,
    store: runtime.store,
    outcomes,
    inspection,
    errors,
    async say(text, sayOptions = {}) {
      const messageId = sayOptions.messageId ?? `h${++messageSeq}`;
      send({
        type: 'channel.message',
        channel: sayOptions.channel ?? channel,
        messageId,
        author: { kind: 'human', ...(sayOptions.as ?? { id: 'u1', name: 'Ada' }) },
        text,
        ...(sayOptions.mentions ? { mentions: sayOptions.mentions } : {}),
        ...(sayOptions.replyTo ? { replyTo: sayOptions.replyTo } : {}),
        ...(sayOptions.voice ? { voice: true } : {}),
      });
      await settle();
      return messageId;
    },
    async summon(avatarId, by = { id: 'u1', name: 'Ada' }) {
      send({ type: 'avatar.summon', channel, avatarId, by, messageId: `s${++messageSeq}` });
      await settle();
    },
    async dismiss(avatarId) {
      send({ type: 'avatar.dismiss', channel, avatarId });
      await settle();
    },
    settle,
    advance: simulated.advance,
    stop: simulated.stop,
  };
}
