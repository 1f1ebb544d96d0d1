import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { LanguageModel } from 'ai';

/** A hosted or self-hosted model, with what it takes to reach it. */
export interface ProviderModelSpec {
  provider: 'openai' | 'anthropic' | 'openai-compatible';
  modelId: string;
  /** The server (required for openai-compatible; a proxy for the others). */
  baseUrl?: string | undefined;
  apiKey?: string | undefined;
}

/**
 * The AI SDK model for a provider: OpenAI's chat completions, Anthropic's messages, or an
 * OpenAI-compatible server's chat completions (structured outputs on). The key goes to the
 * provider only.
 */
export function createProviderLanguageModel(spec: ProviderModelSpec): LanguageModel {
  const { modelId, baseUrl: baseURL, apiKey } = spec;
  const settings = {
    ...(apiKey !== undefined ? { apiKey } : {}),
    ...(baseURL !== undefined ? { baseURL } : {}),
  };
  if (spec.provider === 'openai') return createOpenAI(settings).chat(modelId);
  if (spec.provider === 'anthropic') return createAnthropic(settings)(modelId);
  return createOpenAICompatible({
    name: 'openai-compatible',
    baseURL: baseURL as string,
    ...(apiKey !== undefined ? { apiKey } : {}),
    supportsStructuredOutputs: true,
  }).chatModel(modelId);
}
