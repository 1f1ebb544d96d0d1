import { toProfile } from '../actors/avatarDefinition.js';
import type { EmailAssistant } from '../actors/email/emailAssistant.js';
import type { Runtime } from '../actors/runtimeOptions.js';
import { type CoordinationConfig, defaultCoordinationConfig } from '../config/coordinationConfig.js';
import { type Logger, silentLogger } from '../logging/logger.js';
import type { Clock } from '../ports/clock.js';
import { READ_ONLY_PLAYGROUND, type ServeStudioOptions, serveStudio } from './serveStudio.js';
import { storedFloorsReader } from './storedFloors.js';
import { attachStudioProjection } from './studioProjection.js';
import type { StudioServer } from './studioServer.js';
import { createStudioStore, type StudioStore } from './studioStore.js';

/** What {@link attachStudio} attaches to and how it serves. */
export interface AttachStudioOptions
  extends Pick<ServeStudioOptions, 'host' | 'port' | 'token' | 'staticDir' | 'bodyTimeoutMs' | 'refreshMs'> {
  runtime: Runtime;
  assistant?: EmailAssistant;
  /** The runtime's clock (the state's `now` follows it). */
  clock: Clock;
  logger?: Logger;
  /** The coordination settings the runtime runs with (default: the defaults). */
  config?: CoordinationConfig;
  /** A terminal channel of the runtime the page may post in; none: the playground only watches. */
  playground?: NonNullable<ServeStudioOptions['playground']>;
  /**
   * Also show the floors stored by other processes (read without taking their channels), read
   * again with every refresh. For a studio that runs no channels of its own.
   */
  storedFloors?: boolean;
}

/** A studio attached to a runtime that someone else runs (and stops). */
export interface AttachedStudio {
  server: StudioServer;
  studioStore: StudioStore;
  /** Reads the store again for what other processes changed (the page's reads do it too). */
  refresh(): Promise<void>;
  /** Stops the server and the projection; the runtime and the assistant are left running. */
  close(): Promise<void>;
}

/**
 * The studio over an existing runtime and email assistant: one studio store, one projection
 * attached to the runtime's live actors, one server. The inbox is the store's (what
 * `troupe inbox list` shows), and answers go through the assistant as `troupe inbox answer`'s do.
 */
export async function attachStudio(options: AttachStudioOptions): Promise<AttachedStudio> {
  const { runtime, assistant, clock, playground } = options;
  const logger = options.logger ?? silentLogger();
  const config = options.config ?? defaultCoordinationConfig;
  const studioStore = createStudioStore({
    now: clock.now(),
    avatarNames: new Map(runtime.avatars.map((a) => [a.id, a.name])),
    playground: {
      channel: playground
        ? { platform: playground.channel.kind, id: playground.channel.id }
        : { platform: 'none', id: 'none' },
      avatars: playground
        ? runtime.avatars.map((a) => ({ id: a.id, name: a.name, ...(a.emoji ? { emoji: a.emoji } : {}) }))
        : [],
      ...(playground ? {} : { readOnly: READ_ONLY_PLAYGROUND }),
    },
  });
  const projection = attachStudioProjection({
    store: studioStore,
    runtime,
    clock,
    logger,
    config,
    ...(assistant ? { emailAssistant: assistant } : {}),
    ...(playground
      ? { playground: { transport: playground.transport, channelId: playground.channel.id } }
      : {}),
    ...(options.storedFloors
      ? {
          storedFloors: storedFloorsReader({
            documents: runtime.store.documents,
            config,
            avatars: () => runtime.avatars.map(toProfile),
            now: () => clock.now(),
            logger,
          }),
        }
      : {}),
  });
  await projection.ready;
  await projection.refresh();
  let server: StudioServer;
  try {
    server = await serveStudio({ ...options, logger, runtime, studioStore, projection });
  } catch (error) {
    projection.detach();
    throw error;
  }
  return {
    server,
    studioStore,
    refresh: () => projection.refresh(),
    async close() {
      await server.close();
      projection.detach();
    },
  };
}
