import { systemClock } from '../actors/clock.js';
import type { Runtime } from '../actors/runtimeOptions.js';
import { lazyEntityLookup } from '../adapters/sql/lazyEntityLookup.js';
import { openDefaultStore } from '../adapters/store/storeFromEnv.js';
import { TerminalTransport } from '../adapters/terminal/terminalTransport.js';
import { createRuntime } from '../createRuntime.js';
import type { TroupeStore } from '../ports/store.js';
import { TroupeError } from '../ports/troupeError.js';
import { READ_ONLY_PLAYGROUND } from '../studio/serveStudio.js';
import { attachStudioProjection, type StudioProjection } from '../studio/studioProjection.js';
import { createStudioStore, type StudioStore } from '../studio/studioStore.js';
import { avatarCreationOf } from './avatarCreationOf.js';
import type { ChatOptions } from './chatOptions.js';
import type { ChatSettings } from './chatSettings.js';
import { fail, readOrFail } from './fail.js';
import { usageLedgerFromEnv } from './usageFromEnv.js';

/** The runtime a chat runs on, with what it opened and must close. */
export interface ChatRuntime {
  runtime: Runtime;
  transport: TerminalTransport;
  store: TroupeStore;
  lookupTool: ReturnType<typeof lazyEntityLookup>;
  /** The studio's view of the runtime, which `/who` reads. */
  studioStore: StudioStore;
  projection: StudioProjection;
}

/**
 * Opens the store the environment names, then builds the runtime on it with a terminal transport
 * and attaches the studio's projection. Returns the exit code when the store cannot be opened.
 */
export async function openChatRuntime(
  options: ChatOptions,
  settings: ChatSettings,
): Promise<ChatRuntime | number> {
  const { env } = options;
  const { avatars, logger, model, replies, creation } = settings;
  let store: TroupeStore;
  try {
    store = await openDefaultStore(env, { logger });
  } catch (error) {
    if (TroupeError.isInstance(error)) return fail(options.stderr, error.code, error.message);
    throw error;
  }
  const usage = await readOrFail(options.stderr, () => usageLedgerFromEnv(env, store, logger));
  if (typeof usage === 'number') {
    await store.close();
    return usage;
  }
  const lookupTool = lazyEntityLookup(env, { logger });
  // Ids stay unique across sessions: the store keeps the floor, which remembers message ids.
  // Serving only its channel: another channel's reply left unsettled is not shown here.
  const transport = new TerminalTransport({
    idPrefix: `${Date.now().toString(36)}-`,
    channels: [options.channel],
  });
  const runtime = createRuntime({
    avatars,
    config: options.config,
    model: model.model,
    models: model.models,
    maxReplyChars: replies.maxReplyChars,
    transports: [transport],
    store,
    usage,
    logger,
    lookup: { tool: lookupTool, composer: { env } },
    avatarCreation: avatarCreationOf(creation, model, logger),
  });

  // The studio's projection of this runtime: /who reads it, as the studio's page would.
  const studioStore = createStudioStore({
    now: Date.now(),
    avatarNames: new Map(avatars.map((a) => [a.id, a.name])),
    // The chat's channel is the studio's playground: watched, and posted into with --playground.
    playground: {
      channel: { platform: 'terminal', id: options.channel },
      avatars: runtime.avatars.map((a) => ({
        id: a.id,
        name: a.name,
        ...(a.emoji ? { emoji: a.emoji } : {}),
      })),
      ...(options.playground ? {} : { readOnly: READ_ONLY_PLAYGROUND }),
    },
  });
  const projection = attachStudioProjection({
    store: studioStore,
    runtime,
    clock: systemClock,
    logger,
    config: options.config,
    playground: { transport, channelId: options.channel },
  });
  return { runtime, transport, store, lookupTool, studioStore, projection };
}

/**
 * Lets whatever is on its way be delivered (pending timers, such as a follow-up not due yet, are
 * dropped), then stops the runtime and closes the store and the lookup.
 */
export async function closeChatRuntime(chat: ChatRuntime): Promise<void> {
  await chat.runtime.whenIdle();
  await chat.runtime.stop();
  await chat.store.close();
  await chat.lookupTool.close();
}
