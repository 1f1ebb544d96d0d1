import { MODEL_PROVIDERS, parseModelChoice } from '../../config/modelChoice.js';
import { type Logger, silentLogger } from '../../logging/logger.js';
import type { TurnModel, TurnModelResolver } from '../../ports/model.js';
import { TroupeError } from '../../ports/troupeError.js';
import { createAiSdkTurnModel } from './aiSdkModel.js';
import { type ConcurrencyLimit, createConcurrencyLimit } from './concurrencyLimit.js';
import type { ModelProfile } from './modelProfiles.js';
import { defaultModelIds, type ModelProvider } from './modelSettings.js';
import { createProviderLanguageModel } from './providerModel.js';
import { createScriptedModel } from './scriptedModel.js';

/** The model the environment configures, to reuse (same provider, model and server) and share limits with. */
export interface DefaultModelRef {
  /** The model itself. */
  model: TurnModel;
  /** Its provider; the environment's server (`baseUrl`) is used for avatars' models of this provider. */
  provider: ModelProvider;
  /** Its model id (absent offline). */
  modelId?: string | undefined;
  /** Its server: the environment's `TROUPE_MODEL_BASE_URL`. */
  baseUrl?: string | undefined;
  /** The concurrency limit it uses, shared with avatars' models of the same provider and server. */
  limit?: ConcurrencyLimit | undefined;
}

/** What {@link createModelResolver} builds models from: the environment's keys, server, profiles and call settings. */
export interface ModelResolverOptions {
  /** The environment's own model. */
  defaultModel: DefaultModelRef;
  /** Keys per provider: `OPENAI_API_KEY`, `ANTHROPIC_API_KEY`, `TROUPE_MODEL_API_KEY` (openai-compatible). */
  keys: { openai?: string | undefined; anthropic?: string | undefined; compatible?: string | undefined };
  /** Named models (`TROUPE_MODEL_PROFILES`). */
  profiles?: Readonly<Record<string, ModelProfile>> | undefined;
  /** Time allowed per call, retries included (ms). */
  timeoutMs: number;
  /** Retries of retryable failures. */
  maxRetries: number;
  /** Calls in flight at once per provider (per server for openai-compatible), shared by its models. */
  concurrency: number;
  /** Where calls log usage and failures. Default: silent. */
  logger?: Logger;
}

type Target = { provider: ModelProvider; modelId?: string | undefined; baseUrl?: string | undefined };

const keyVariables = { openai: 'OPENAI_API_KEY', anthropic: 'ANTHROPIC_API_KEY' } as const;

function refuse(message: string): never {
  throw new TroupeError('TROUPE_AVATAR_MODEL_INVALID', message);
}

/**
 * Refuses, as the resolver does (`TROUPE_AVATAR_MODEL_INVALID`), a choice that names neither a
 * known provider nor one of `profiles`; builds nothing and checks no key or server, for runs
 * that play every turn offline.
 */
export function checkModelChoice(choice: string, profiles?: Readonly<Record<string, ModelProfile>>): void {
  targetOf(choice, profiles);
}

/** The provider, model and server a choice names, from itself or its profile. */
function targetOf(choice: string, profiles: Readonly<Record<string, ModelProfile>> = {}): Target {
  const parsed = parseModelChoice(choice);
  if (parsed.kind === 'profile') {
    const profile = profiles[parsed.name];
    if (!profile) {
      const known = Object.keys(profiles);
      refuse(
        `no provider or profile of that name (a provider is written provider:model, e.g. openai:gpt-4o-mini; ${
          known.length > 0
            ? `profiles in TROUPE_MODEL_PROFILES: ${known.join(', ')}`
            : 'TROUPE_MODEL_PROFILES defines no profiles'
        }).`,
      );
    }
    return { provider: profile.provider, modelId: profile.model, baseUrl: profile.baseUrl };
  }
  const provider = parsed.provider as ModelProvider;
  if (!(MODEL_PROVIDERS as readonly string[]).includes(provider))
    refuse(`unknown provider "${parsed.provider}" (known: ${MODEL_PROVIDERS.join(', ')}).`);
  return { provider, modelId: parsed.modelId };
}

/** The target made whole: its model id, its server, its key; refused when one it needs is missing. */
function complete(target: Target, options: ModelResolverOptions) {
  const { provider } = target;
  if (provider === 'offline') return undefined;
  const fallback = options.defaultModel;
  // The environment's server belongs to the environment's provider (a proxy, or the server).
  const baseUrl = target.baseUrl ?? (fallback.provider === provider ? fallback.baseUrl : undefined);
  if (provider === 'openai-compatible') {
    if (target.modelId === undefined) refuse('openai-compatible needs a model: openai-compatible:<model>.');
    if (baseUrl === undefined)
      refuse(
        'openai-compatible needs a server: a profile in TROUPE_MODEL_PROFILES with a baseUrl, or TROUPE_MODEL_BASE_URL with the default provider openai-compatible.',
      );
    return { provider, modelId: target.modelId, baseUrl, apiKey: options.keys.compatible };
  }
  const apiKey = provider === 'openai' ? options.keys.openai : options.keys.anthropic;
  if (apiKey === undefined) refuse(`${provider} needs its key: set ${keyVariables[provider]}.`);
  return { provider, modelId: target.modelId ?? defaultModelIds[provider], baseUrl, apiKey };
}

/**
 * Builds the models avatars name (`provider:model`, `offline`, or a profile of
 * `TROUPE_MODEL_PROFILES`) with the environment's keys and call settings. The same provider,
 * model and server always give the same model (the environment's own model when it matches), and
 * models of one provider (one server for openai-compatible) share one concurrency limit.
 * Refusals are `TROUPE_AVATAR_MODEL_INVALID` saying what to set; keys are never quoted.
 */
export function createModelResolver(options: ModelResolverOptions): TurnModelResolver {
  const { defaultModel } = options;
  const models = new Map<string, TurnModel>();
  const limits = new Map<string, ConcurrencyLimit>();
  const limitKey = (provider: string, baseUrl: string | undefined) => `${provider} ${baseUrl ?? ''}`;
  const modelKey = (provider: string, modelId: string | undefined, baseUrl: string | undefined) =>
    `${limitKey(provider, baseUrl)} ${modelId ?? ''}`;
  models.set(modelKey(defaultModel.provider, defaultModel.modelId, defaultModel.baseUrl), defaultModel.model);
  if (defaultModel.limit)
    limits.set(limitKey(defaultModel.provider, defaultModel.baseUrl), defaultModel.limit);
  return (choice) => {
    const spec = complete(targetOf(choice, options.profiles), options);
    if (!spec) return defaultModel.provider === 'offline' ? defaultModel.model : createScriptedModel();
    const key = modelKey(spec.provider, spec.modelId, spec.baseUrl);
    const known = models.get(key);
    if (known) return known;
    const sharedKey = limitKey(spec.provider, spec.baseUrl);
    const limit = limits.get(sharedKey) ?? createConcurrencyLimit(options.concurrency);
    limits.set(sharedKey, limit);
    const model = createAiSdkTurnModel({
      model: createProviderLanguageModel(spec),
      id: `${spec.provider}:${spec.modelId}`,
      timeoutMs: options.timeoutMs,
      maxRetries: options.maxRetries,
      limit,
      logger: options.logger ?? silentLogger(),
      apiKeyVariable:
        spec.provider === 'openai-compatible' ? 'TROUPE_MODEL_API_KEY' : keyVariables[spec.provider],
    });
    models.set(key, model);
    return model;
  };
}
