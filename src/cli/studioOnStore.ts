import type { AvatarDefinition } from '../actors/avatarDefinition.js';
import { systemClock } from '../actors/clock.js';
import { openDefaultStore } from '../adapters/store/storeFromEnv.js';
import { coordinationFromEnv } from '../config/coordinationFromEnv.js';
import type { EnvRecord } from '../config/settings.js';
import { createRuntime } from '../createRuntime.js';
import type { Logger } from '../logging/logger.js';
import type { TroupeStore } from '../ports/store.js';
import { isTroupeError } from '../ports/troupeError.js';
import { type OpenedStudio, openStudio } from '../studio/openStudio.js';
import { fail } from './fail.js';
import { openEmailAssistant } from './openEmailAssistant.js';
import { exitCodeOf } from './storeErrors.js';
import { storeWhere } from './storeFlag.js';

/** How often `troupe studio` reads the store again for what other processes changed. */
export const STORE_REFRESH_MS = 2_000;

/** The studio on the store every command reads, with what it opened. */
export interface StoreStudio {
  studio: OpenedStudio;
  /** Where the store is, for people (never a MongoDB URI). */
  where: string;
  /** Stops the studio, then closes the assistant and the store. */
  close(): Promise<void>;
}

/**
 * `troupe studio`'s store: the one the environment names (as `troupe inbox list` and
 * `troupe chat` open it), with the email assistant `troupe inbox` opens on it, and a runtime that
 * runs no channel of its own: the floors are read from the store (no lease taken), the inbox is
 * the store's, and an answer is the assistant's, as `troupe inbox answer` gives it. Returns the
 * exit code when something cannot be opened (the studio's own listen errors are thrown).
 */
export async function openStoreStudio(
  env: EnvRecord,
  listen: {
    host: string;
    port: number;
    logger: Logger;
    /** The avatars the bot or chat runs with: names for the stored floors (ids without them). */
    avatars?: readonly AvatarDefinition[];
  },
  stderr: (text: string) => void,
): Promise<StoreStudio | number> {
  const { logger } = listen;
  let store: TroupeStore;
  try {
    store = await openDefaultStore(env, { logger });
  } catch (error) {
    if (!isTroupeError(error)) throw error;
    return fail(stderr, error.code, error.message, exitCodeOf(error));
  }
  let opened: Awaited<ReturnType<typeof openEmailAssistant>>;
  let config: ReturnType<typeof coordinationFromEnv>;
  try {
    config = coordinationFromEnv(env);
    opened = await openEmailAssistant(env, store, logger);
  } catch (error) {
    await store.close();
    if (!isTroupeError(error)) throw error;
    return fail(stderr, error.code, error.message, exitCodeOf(error));
  }
  // It receives no event: its avatars only name the ones on the stored floors.
  const runtime = createRuntime({
    avatars: [...(listen.avatars ?? [])],
    config,
    store,
    logger,
    clock: systemClock,
  });
  const closeAll = async () => {
    await runtime.stop();
    await opened.close();
    await store.close();
  };
  let studio: OpenedStudio;
  try {
    studio = await openStudio({
      host: listen.host,
      port: listen.port,
      logger,
      attach: {
        runtime,
        assistant: opened.assistant,
        config,
        storedFloors: true,
        refreshMs: STORE_REFRESH_MS,
      },
    });
  } catch (error) {
    await closeAll();
    throw error;
  }
  return {
    studio,
    where: storeWhere(env, store.kind),
    async close() {
      await studio.close();
      await closeAll();
    },
  };
}
