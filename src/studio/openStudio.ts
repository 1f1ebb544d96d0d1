import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { AvatarCreationOptions } from '../actors/avatarCreator.js';
import { SimulatedClock, systemClock } from '../actors/clock.js';
import type { EmailAssistant } from '../actors/email/emailAssistant.js';
import type { Runtime } from '../actors/runtimeOptions.js';
import { advanceOnClock } from '../actors/settleOnClock.js';
import { lazyEntityLookup } from '../adapters/sql/lazyEntityLookup.js';
import { createMemoryStore } from '../adapters/store/memory/memoryStore.js';
import { TerminalTransport } from '../adapters/terminal/terminalTransport.js';
import { createLocalEmailAssistant } from '../app/localEmailAssistant.js';
import { scenarioAvatars } from '../app/scenarioAvatars.js';
import type { CoordinationConfig, CoordinationConfigInput } from '../config/coordinationConfig.js';
import { resolveCoordinationConfig } from '../config/coordinationFromEnv.js';
import { createRuntime } from '../createRuntime.js';
import { type Logger, silentLogger } from '../logging/logger.js';
import type { Clock } from '../ports/clock.js';
import { configErrorCodes } from '../ports/errorCodes.js';
import type { TurnModel, TurnModelResolver } from '../ports/model.js';
import type { TroupeStore } from '../ports/store.js';
import { isTroupeError, TroupeError } from '../ports/troupeError.js';
import { loadScenarioFile } from '../simulator/scenario.js';
import { attachStudio } from './attachStudio.js';
import { runtimeStudioActions } from './runtimeStudioActions.js';
import type { ServeStudioOptions } from './serveStudio.js';
import { renderStudioCharts } from './studioCharts.js';
import { attachStudioProjection } from './studioProjection.js';
import { startStudioServer } from './studioServer.js';
import { createStudioStore, type StudioStore } from './studioStore.js';

// Two levels below the package root from src/studio and dist/studio alike.
const examplesDir = new URL('../../examples/', import.meta.url);

/** Hands each email of a JSON Lines mailbox to the assistant; one it does not take is logged. */
async function receiveMailbox(assistant: EmailAssistant, file: string, logger: Logger): Promise<void> {
  const mailbox = await readFile(file, 'utf8');
  for (const line of mailbox.split('\n').filter((l) => l.trim() !== '')) {
    const received = await assistant.receive(JSON.parse(line));
    if (isTroupeError(received)) logger.warn({ err: received }, 'an email of the mailbox was not taken');
  }
}

/** How {@link openStudio} starts. Everything has an embedded default. */
export interface OpenStudioOptions {
  /**
   * A runtime that runs already, with `assistant`: the studio attaches to them (their live
   * actors, the inbox of their store) instead of making its own demo, and closing it leaves them
   * running. The demo's options (scenario, models, mailbox, config) are then not used.
   */
  attach?: {
    runtime: Runtime;
    assistant: EmailAssistant;
    /** A terminal channel of the runtime the page may post in; none: the playground only watches. */
    playground?: NonNullable<ServeStudioOptions['playground']>;
    /** The coordination settings the runtime runs with, for the caps shown (default: the defaults). */
    config?: CoordinationConfig;
    /** Also show the floors other processes stored (see `attachStudio`). */
    storedFloors?: boolean;
    /** How often the store is read again (wall-clock ms); default: on the page's reads only. */
    refreshMs?: number;
  };
  /** Default: the system clock. Tests pass a SimulatedClock and move it with `advance`. */
  clock?: Clock;
  /** Default: a memory store (closed with the studio; a store given here is left open). */
  store?: TroupeStore;
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 4319; 0 picks a free port. */
  port?: number;
  /** Default: 32 random bytes. */
  token?: string;
  /** Default: silent. */
  logger?: Logger;
  /** Coordination settings for the playground's floor (default: the defaults). */
  config?: CoordinationConfigInput;
  /** The scenario whose avatars and channel the playground uses (default: the package's `examples/tour.yaml`). */
  scenarioFile?: string;
  /** The model of avatars that name none (default: the offline scripted model). */
  model?: TurnModel;
  /**
   * Builds the models avatars name with `model:` (e.g. `modelFromEnv(process.env).models`);
   * default: only `offline`. A choice it refuses stops the studio at start
   * (`TROUPE_AVATAR_MODEL_INVALID`, naming the avatar).
   */
  models?: TurnModelResolver;
  /** Where the page's files are (default: the package's `studio/`). */
  staticDir?: string;
  /**
   * Whether the playground's "summon someone new" creates avatars, how many a person may a day,
   * and the model that writes them (default: on, 5 a day, the offline template).
   */
  avatarCreation?: AvatarCreationOptions;
  /** The mailbox the assistant starts with, one email per line (default: the sample mailbox). */
  mailboxFile?: string;
  /** How long a POST's body may take once its headers came (default 10 s). */
  bodyTimeoutMs?: number;
  /**
   * With a SimulatedClock: how long `advance()` waits for one wait outside the process that does
   * not answer (wall-clock ms, default 60 s). Work inside the process is waited for however long
   * it takes.
   */
  settleLimitMs?: number;
}

/** A running studio. */
export interface OpenedStudio {
  /** The page's address without the token; open `${url}#token=${token}`. */
  url: string;
  token: string;
  port: number;
  clock: Clock;
  runtime: Runtime;
  assistant: EmailAssistant;
  studioStore: StudioStore;
  /**
   * With a SimulatedClock: moves time by `ms`, firing due timers in order (threads expiring,
   * follow-ups), the runtime settling after each on its idle signal (every unit of work parked
   * on the clock or done; `runtime.pending()` says what is left). Throws on the system clock,
   * and `TROUPE_TEST_NOT_SETTLED` naming an external wait unanswered for `settleLimitMs`.
   */
  advance(ms: number): Promise<void>;
  /** Reads the store again for what other processes changed (an answer given elsewhere). */
  refresh(): Promise<void>;
  /**
   * Stops the server, the runtime, the demo ERP and (when it made it) the store; an attached
   * studio stops only its server and projection.
   */
  close(): Promise<void>;
}

/** The person in the playground (the tour's human). */
const PERSON = { id: 'studio-user', name: 'Sam' };

/**
 * Troupe Studio on embedded defaults: the runtime with the tour's avatars in its channel (the
 * playground, a terminal channel), Luna's lookups on the demo ERP, the email assistant offline on
 * the sample mailbox, one studio store fed by the projection, and the server. Nothing to set up:
 * `troupe studio` runs this.
 */
export async function openStudio(options: OpenStudioOptions = {}): Promise<OpenedStudio> {
  if (options.attach) return openAttached(options, options.attach);
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? silentLogger();
  const ownStore = options.store === undefined;
  const store = options.store ?? createMemoryStore();
  const scenario = await loadScenarioFile(
    options.scenarioFile ?? fileURLToPath(new URL('tour.yaml', examplesDir)),
  );
  const channel = { kind: 'terminal', id: scenario.channel };
  const person = scenario.humans[0] ? { id: PERSON.id, name: scenario.humans[0].name } : PERSON;
  const lookup = lazyEntityLookup({}, { logger });
  const transport = new TerminalTransport();
  const runtime = createRuntime({
    avatars: scenarioAvatars(scenario),
    ...(options.config ? { config: options.config } : {}),
    ...(options.model ? { model: options.model } : {}),
    ...(options.models ? { models: options.models } : {}),
    transports: [transport],
    store,
    clock,
    logger,
    lookup: { tool: lookup },
    avatarCreation: options.avatarCreation ?? { enabled: true },
  });
  const { assistant } = createLocalEmailAssistant(store, clock, logger);
  const studioStore = createStudioStore({
    now: clock.now(),
    avatarNames: new Map(runtime.avatars.map((a) => [a.id, a.name])),
    playground: {
      channel: { platform: channel.kind, id: channel.id },
      avatars: runtime.avatars.map((a) => ({
        id: a.id,
        name: a.name,
        ...(a.emoji ? { emoji: a.emoji } : {}),
      })),
    },
  });
  const projection = attachStudioProjection({
    store: studioStore,
    runtime,
    clock,
    logger,
    // Resolved again (createRuntime did, and threw if it was wrong): the caps shown with usage.
    config: resolveCoordinationConfig(options.config ?? {}),
    emailAssistant: assistant,
    playground: { transport, channelId: channel.id },
  });
  await projection.ready;
  // The playground's residents are in the store from the start.
  await projection.open(channel);
  await receiveMailbox(
    assistant,
    options.mailboxFile ?? fileURLToPath(new URL('email/sample-mailbox.jsonl', examplesDir)),
    logger,
  );

  const actions = runtimeStudioActions({ runtime, assistant, transport, channel, person });

  let server: Awaited<ReturnType<typeof startStudioServer>>;
  try {
    server = await startStudioServer({
      store: studioStore,
      ...(options.host !== undefined ? { host: options.host } : {}),
      ...(options.port !== undefined ? { port: options.port } : {}),
      ...(options.token !== undefined ? { token: options.token } : {}),
      actions,
      charts: renderStudioCharts,
      logger,
      ...(options.staticDir !== undefined ? { staticDir: options.staticDir } : {}),
      ...(options.bodyTimeoutMs !== undefined ? { bodyTimeoutMs: options.bodyTimeoutMs } : {}),
    });
  } catch (error) {
    projection.detach();
    await runtime.stop();
    await lookup.close();
    if (ownStore) await store.close();
    throw error;
  }

  let closing: Promise<void> | undefined;
  return {
    url: server.url,
    token: server.token,
    port: server.port,
    clock,
    runtime,
    assistant,
    studioStore,
    advance: advancer(runtime, clock, options),
    refresh: () => projection.refresh(),
    close() {
      closing ??= (async () => {
        await server.close();
        await runtime.stop();
        projection.detach();
        await lookup.close();
        if (ownStore) await store.close();
      })();
      return closing;
    },
  };
}

/** `advance` of a studio: moves a SimulatedClock and settles the runtime after each timer. */
function advancer(runtime: Runtime, clock: Clock, options: OpenStudioOptions) {
  return async (ms: number) => {
    if (!(clock instanceof SimulatedClock))
      throw new TroupeError(
        configErrorCodes.invalid,
        'advance() moves a SimulatedClock; this studio runs on the system clock (pass clock: new SimulatedClock()).',
      );
    await advanceOnClock(runtime, clock, ms, {
      ...(options.settleLimitMs !== undefined ? { limitMs: options.settleLimitMs } : {}),
    });
  };
}

/** The studio attached to a runtime and assistant the caller runs (and stops). */
async function openAttached(
  options: OpenStudioOptions,
  attach: NonNullable<OpenStudioOptions['attach']>,
): Promise<OpenedStudio> {
  const clock = options.clock ?? systemClock;
  const { runtime, assistant } = attach;
  const studio = await attachStudio({
    runtime,
    assistant,
    clock,
    ...(options.logger ? { logger: options.logger } : {}),
    ...(attach.config ? { config: attach.config } : {}),
    ...(attach.playground ? { playground: attach.playground } : {}),
    ...(attach.storedFloors ? { storedFloors: true } : {}),
    ...(attach.refreshMs !== undefined ? { refreshMs: attach.refreshMs } : {}),
    ...(options.host !== undefined ? { host: options.host } : {}),
    ...(options.port !== undefined ? { port: options.port } : {}),
    ...(options.token !== undefined ? { token: options.token } : {}),
    ...(options.staticDir !== undefined ? { staticDir: options.staticDir } : {}),
    ...(options.bodyTimeoutMs !== undefined ? { bodyTimeoutMs: options.bodyTimeoutMs } : {}),
  });
  return {
    url: studio.server.url,
    token: studio.server.token,
    port: studio.server.port,
    clock,
    runtime,
    assistant,
    studioStore: studio.studioStore,
    advance: advancer(runtime, clock, options),
    refresh: () => studio.refresh(),
    close: () => studio.close(),
  };
}
