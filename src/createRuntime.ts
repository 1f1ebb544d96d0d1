import { startRuntime } from './actors/runtime.js';
import { checkRuntimeLimits } from './actors/runtimeLimits.js';
import type { Runtime, RuntimeOptions, RuntimeStore } from './actors/runtimeOptions.js';
import { createScriptedModel } from './adapters/llm/scriptedModel.js';
import { createMemoryStore } from './adapters/store/memory/memoryStore.js';
import { ConfigError } from './config/configError.js';
import { resolveCoordinationConfig } from './config/coordinationFromEnv.js';
import { DEFAULT_HISTORY_WINDOW } from './ports/history.js';
import type { TurnModel } from './ports/model.js';
import type { TroupeStore } from './ports/store.js';
import { TroupeError } from './ports/troupeError.js';

/**
 * Creates a runtime: one actor per channel in a registry, a routing actor over the transports,
 * the turn executor over the model and history, all wired by RxJS streams. This entry point
 * chooses the embedded defaults: the offline scripted model when no `model` is given (the
 * runtime logs once that it is offline) and an in-memory store when no `store` is given.
 *
 * @example
 * ```ts
 * const runtime = createRuntime({ avatars, transports: [myTransport], config: { threadTtlMs: '3m' } });
 * runtime.outcomes$.subscribe((o) => logger.info({ sent: o.sent, parts: o.parts }, 'delivered'));
 * runtime.send({ type: 'channel.message', channel: { kind: 'discord', id: '42' }, messageId: 'm1',
 *   author: { kind: 'human', id: 'u1', name: 'Ada' }, text: 'Hello @Nova' });
 * await runtime.stop();
 * ```
 * @throws TroupeError `TROUPE_AVATARS_INVALID` when the avatar list does not validate, and
 *   `TROUPE_AVATAR_MODEL_INVALID` naming the avatar when its `model:` is one `models` cannot build
 *   (without `models`, anything but `offline` or the default model's id).
 * @throws ConfigError `TROUPE_CONFIG_INVALID` when `config` names an unknown setting or a bad value,
 *   or a timeout, deadline, retry or persistence option is not a finite number in range, or
 *   `historyLimit` reads more lines than the given store's history keeps per channel.
 */
export function createRuntime(options: RuntimeOptions): Runtime {
  checkRuntimeLimits(options);
  return startRuntime({
    ...options,
    config: resolveCoordinationConfig(options.config ?? {}),
    model: options.model ?? createScriptedModel(),
    models: options.models ?? offlineOnly,
    store: resolveStore(options.store, options.historyLimit),
  });
}

/** The resolver when none is given: the offline model is the one model the runtime builds itself. */
function offlineOnly(choice: string): TurnModel {
  if (choice === 'offline' || choice === 'offline:scripted') return createScriptedModel();
  throw new TroupeError(
    'TROUPE_AVATAR_MODEL_INVALID',
    'no model resolver was given to build it; pass `models` to createRuntime (e.g. `modelFromEnv(process.env).models` from troupe/ai-sdk).',
  );
}

/**
 * A full store from what the caller gave: a store, parts of one, or nothing (memory, keeping the
 * history lines a prompt reads).
 */
function resolveStore(
  given: TroupeStore | Partial<RuntimeStore> | undefined,
  historyLimit: number | undefined,
): TroupeStore {
  const store = given && 'documents' in given ? (given as TroupeStore) : partsWithMemory(given, historyLimit);
  checkHistoryKept(store, historyLimit ?? DEFAULT_HISTORY_WINDOW);
  return store;
}

function partsWithMemory(
  given: Partial<RuntimeStore> | undefined,
  historyLimit: number | undefined,
): TroupeStore {
  const memory = createMemoryStore({ historyPerChannel: historyLimit ?? DEFAULT_HISTORY_WINDOW });
  if (!given) return memory;
  return {
    kind: memory.kind,
    documents: memory.documents,
    memory: memory.memory,
    events: memory.events,
    processed: memory.processed,
    outbox: given.outbox ?? memory.outbox,
    history: given.history ?? memory.history,
    close: () => memory.close(),
  };
}

/** A prompt reading more lines than the history keeps would quietly get fewer: refused up front. */
function checkHistoryKept(store: TroupeStore, historyLimit: number): void {
  const kept = store.history.keptPerChannel;
  if (kept === undefined || kept >= historyLimit) return;
  throw new ConfigError([
    {
      variable: 'historyLimit',
      value: String(historyLimit),
      expected: `at most the ${kept} lines the store's history keeps per channel (create it with createMemoryStore({ historyPerChannel: ${historyLimit} }))`,
    },
  ]);
}
