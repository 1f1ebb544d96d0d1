import { count, oneOf, positiveDurationMs, text } from '../../config/settingSchemas.js';
import { defineSettings } from '../../config/settings.js';
import { httpUrl } from './httpUrl.js';
import { modelProfilesSchema } from './modelProfiles.js';

/** Where turns are generated: a hosted provider, any OpenAI-compatible server, or offline. */
export type ModelProvider = 'openai' | 'anthropic' | 'openai-compatible' | 'offline';

const provider = oneOf(['openai', 'anthropic', 'openai-compatible', 'offline']);

/** Model used when `TROUPE_MODEL` is unset, per provider (an OpenAI-compatible server needs one named). */
export const defaultModelIds = {
  openai: 'gpt-4o-mini',
  anthropic: 'claude-3-5-haiku-latest',
} as const;

/**
 * Every environment variable the language-model layer reads, with its default (`shown` is how
 * docs print it), its parser and what it does. The README's model table comes from this list.
 * Keys (`secret: true`) are never echoed back in errors, logs or descriptions.
 */
export const modelSettings = defineSettings({
  TROUPE_MODEL_PROVIDER: {
    key: 'provider',
    schema: provider,
    shown: 'inferred',
    doc: 'openai, anthropic, openai-compatible or offline. Unset: openai-compatible if TROUPE_MODEL_BASE_URL is set, else openai if OPENAI_API_KEY is, else anthropic if ANTHROPIC_API_KEY is, else offline (scripted replies).',
  },
  TROUPE_MODEL: {
    key: 'modelId',
    schema: text,
    shown: `${defaultModelIds.openai} / ${defaultModelIds.anthropic}`,
    doc: 'The model name. Required for openai-compatible servers (e.g. llama3.2 on Ollama).',
  },
  TROUPE_MODEL_BASE_URL: {
    key: 'baseUrl',
    schema: httpUrl,
    shown: 'unset',
    doc: 'Base URL of an OpenAI-compatible server, e.g. http://localhost:11434/v1 for Ollama (with openai or anthropic: a proxy in front of the provider). No user or password in it: the key goes in TROUPE_MODEL_API_KEY.',
  },
  TROUPE_MODEL_API_KEY: {
    key: 'apiKey',
    schema: text,
    shown: 'unset',
    secret: true,
    doc: 'API key for the OpenAI-compatible server, if it needs one.',
  },
  OPENAI_API_KEY: {
    key: 'openAiApiKey',
    schema: text,
    shown: 'unset',
    secret: true,
    doc: 'OpenAI API key (provider openai).',
  },
  ANTHROPIC_API_KEY: {
    key: 'anthropicApiKey',
    schema: text,
    shown: 'unset',
    secret: true,
    doc: 'Anthropic API key (provider anthropic).',
  },
  TROUPE_MODEL_PROFILES: {
    key: 'profiles',
    schema: modelProfilesSchema,
    shown: 'unset',
    doc: 'Named models avatars pick with `model: <name>` in the avatars file, as JSON: `{"cheap":{"provider":"openai","model":"gpt-4o-mini"}}`; each has a provider, a model (required for openai-compatible) and an optional baseUrl. Keys come from the provider\'s key variable.',
  },
  TROUPE_MODEL_TIMEOUT: {
    key: 'timeoutMs',
    schema: positiveDurationMs,
    default: 30_000,
    shown: '30s',
    doc: 'Time allowed per model call, retries included (30000, 30s, 2m).',
  },
  TROUPE_MODEL_RETRIES: {
    key: 'maxRetries',
    schema: count(0, 10),
    default: 2,
    shown: '2',
    doc: 'Retries after a rate limit (429), a server error (5xx) or a dropped connection.',
  },
  TROUPE_MODEL_CONCURRENCY: {
    key: 'concurrency',
    schema: count(1, 64),
    default: 4,
    shown: '4',
    doc: "Model calls in flight at once, per provider (per server for openai-compatible; avatars' own models of it share the limit); further calls wait their turn.",
  },
});

/** Environment variable names the language-model layer reads. */
export type ModelVariable = keyof typeof modelSettings;
