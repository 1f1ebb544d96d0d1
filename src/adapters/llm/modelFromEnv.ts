import type { LanguageModel } from 'ai';
import { formatDuration } from '../../config/duration.js';
import { type EnvRecord, readSettings, throwIfProblems } from '../../config/settings.js';
import { type Logger, silentLogger } from '../../logging/logger.js';
import type { TurnModel, TurnModelResolver } from '../../ports/model.js';
import { createAiSdkTurnModel } from './aiSdkModel.js';
import { type ConcurrencyLimit, createConcurrencyLimit } from './concurrencyLimit.js';
import type { ModelProfile } from './modelProfiles.js';
import { createModelResolver } from './modelResolver.js';
import { defaultModelIds, type ModelProvider, type ModelVariable, modelSettings } from './modelSettings.js';
import { createProviderLanguageModel } from './providerModel.js';
import { createScriptedModel } from './scriptedModel.js';

/** The model settings read from the environment, resolved (provider inferred) and without keys. */
export interface ModelConfig {
  provider: ModelProvider;
  /** The model name; absent offline. */
  modelId?: string;
  baseUrl?: string;
  timeoutMs: number;
  maxRetries: number;
  concurrency: number;
  /** The variable the API key came from, if any (its name, never its value). */
  apiKeyVariable?: ModelVariable;
}

/** What {@link modelFromEnv} returns. */
export interface ModelFromEnv {
  /** The turn model to generate with. */
  model: TurnModel;
  /** One line for the start-up banner, e.g. `openai gpt-4o-mini (timeout 30s, 2 retries, 4 at once)`. */
  description: string;
  config: ModelConfig;
  /** The AI SDK model behind `model` (absent offline), for structured output or tool-using models. */
  languageModel?: LanguageModel;
  /** The concurrency limit `model` uses, to share with other calls to the same provider. */
  limit?: ConcurrencyLimit;
  /**
   * Builds the models avatars name with `model:` (`provider:model`, `offline`, or a profile of
   * `TROUPE_MODEL_PROFILES`) with this environment's keys and settings; hand it to
   * `createRuntime({ models })`. Models of one provider share one concurrency limit with `model`.
   */
  models: TurnModelResolver;
}

type Parsed = {
  provider?: ModelProvider | undefined;
  modelId?: string | undefined;
  baseUrl?: string | undefined;
  apiKey?: string | undefined;
  openAiApiKey?: string | undefined;
  anthropicApiKey?: string | undefined;
  profiles?: Record<string, ModelProfile> | undefined;
  timeoutMs: number;
  maxRetries: number;
  concurrency: number;
};

function parseEnv(env: EnvRecord): Parsed {
  const { value, problems } = readSettings(modelSettings, env);
  const parsed: Parsed = value;
  const failed = new Set(problems.map((p) => p.variable));
  const provider = parsed.provider ?? inferProvider(parsed);
  const need = (variable: ModelVariable, present: unknown, expected: string) => {
    if (present === undefined && !failed.has(variable)) problems.push({ variable, value: '', expected });
  };
  if (!failed.has('TROUPE_MODEL_PROVIDER')) {
    if (provider === 'openai-compatible') {
      need(
        'TROUPE_MODEL_BASE_URL',
        parsed.baseUrl,
        'the server URL (e.g. http://localhost:11434/v1) for openai-compatible',
      );
      need(
        'TROUPE_MODEL',
        parsed.modelId,
        'the model name the server serves (e.g. llama3.2) for openai-compatible',
      );
    } else if (provider === 'openai') {
      need('OPENAI_API_KEY', parsed.openAiApiKey, 'an OpenAI API key when TROUPE_MODEL_PROVIDER=openai');
    } else if (provider === 'anthropic') {
      need(
        'ANTHROPIC_API_KEY',
        parsed.anthropicApiKey,
        'an Anthropic API key when TROUPE_MODEL_PROVIDER=anthropic',
      );
    }
  }
  throwIfProblems(problems);
  return { ...parsed, provider };
}

/** The provider the environment implies when `TROUPE_MODEL_PROVIDER` is unset. */
function inferProvider(parsed: Parsed): ModelProvider {
  if (parsed.baseUrl !== undefined) return 'openai-compatible';
  if (parsed.openAiApiKey !== undefined) return 'openai';
  if (parsed.anthropicApiKey !== undefined) return 'anthropic';
  return 'offline';
}

/** The URL without credentials, query or fragment: safe for a banner. */
function displayUrl(url: string): string {
  const u = new URL(url);
  return `${u.origin}${u.pathname}`.replace(/\/+$/u, '');
}

/**
 * Picks and builds the turn model from environment variables (see {@link modelSettings}):
 * OpenAI (chat completions), Anthropic, any OpenAI-compatible server (Ollama, vLLM, LM Studio…),
 * or, when nothing is configured, the offline scripted model. Every value is parsed with zod; bad
 * or missing values throw one {@link ConfigError} naming every variable to fix. API keys are
 * handed to the provider only and never appear in the description, config or errors.
 */
export function modelFromEnv(env: EnvRecord, options: { logger?: Logger } = {}): ModelFromEnv {
  const parsed = parseEnv(env);
  const provider = parsed.provider ?? 'offline';
  const { timeoutMs, maxRetries, concurrency } = parsed;
  if (provider === 'offline') {
    const why =
      (env.TROUPE_MODEL_PROVIDER ?? '').trim() !== ''
        ? 'TROUPE_MODEL_PROVIDER=offline'
        : 'no model configured; set OPENAI_API_KEY, ANTHROPIC_API_KEY or TROUPE_MODEL_BASE_URL to use one';
    const model = createScriptedModel();
    return {
      model,
      description: `offline scripted replies (${why})`,
      config: { provider, timeoutMs, maxRetries, concurrency },
      models: resolverFor(parsed, { model, provider }, options.logger),
    };
  }

  const baseURL = parsed.baseUrl;
  // parseEnv made sure an openai-compatible server and model are named.
  const modelId =
    provider === 'openai-compatible'
      ? (parsed.modelId as string)
      : (parsed.modelId ?? defaultModelIds[provider]);
  const apiKeyVariable = keyVariableOf(provider, parsed);
  const languageModel = createProviderLanguageModel({
    provider,
    modelId,
    baseUrl: baseURL,
    apiKey:
      provider === 'openai'
        ? parsed.openAiApiKey
        : provider === 'anthropic'
          ? parsed.anthropicApiKey
          : parsed.apiKey,
  });
  const limit = createConcurrencyLimit(concurrency);
  const model = createAiSdkTurnModel({
    model: languageModel,
    id: `${provider}:${modelId}`,
    timeoutMs,
    maxRetries,
    limit,
    logger: options.logger ?? silentLogger(),
    apiKeyVariable: apiKeyVariable ?? 'TROUPE_MODEL_API_KEY',
  });
  const where = baseURL !== undefined ? ` at ${displayUrl(baseURL)}` : '';
  const retries = `${maxRetries} ${maxRetries === 1 ? 'retry' : 'retries'}`;
  return {
    model,
    description: `${provider} ${modelId}${where} (timeout ${formatDuration(timeoutMs)}, ${retries}, ${concurrency} at once)`,
    config: {
      provider,
      modelId,
      ...(baseURL !== undefined ? { baseUrl: displayUrl(baseURL) } : {}),
      timeoutMs,
      maxRetries,
      concurrency,
      ...(apiKeyVariable !== undefined ? { apiKeyVariable } : {}),
    },
    languageModel,
    limit,
    models: resolverFor(parsed, { model, provider, modelId, baseUrl: baseURL, limit }, options.logger),
  };
}

/** The variable the provider's key comes from, if it has one. */
function keyVariableOf(provider: ModelProvider, parsed: Parsed): ModelVariable | undefined {
  if (provider === 'openai') return 'OPENAI_API_KEY';
  if (provider === 'anthropic') return 'ANTHROPIC_API_KEY';
  return parsed.apiKey !== undefined ? 'TROUPE_MODEL_API_KEY' : undefined;
}

function resolverFor(
  parsed: Parsed,
  defaultModel: Parameters<typeof createModelResolver>[0]['defaultModel'],
  logger: Logger | undefined,
): TurnModelResolver {
  return createModelResolver({
    defaultModel,
    keys: { openai: parsed.openAiApiKey, anthropic: parsed.anthropicApiKey, compatible: parsed.apiKey },
    profiles: parsed.profiles,
    timeoutMs: parsed.timeoutMs,
    maxRetries: parsed.maxRetries,
    concurrency: parsed.concurrency,
    ...(logger ? { logger } : {}),
  });
}
