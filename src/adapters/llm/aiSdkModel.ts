import {
  generateText,
  type LanguageModel,
  type LanguageModelUsage,
  type ModelMessage,
  stepCountIs,
  type ToolSet,
} from 'ai';
import { type Logger, silentLogger } from '../../logging/logger.js';
import type {
  PromptMessage,
  TokenUsage,
  TurnGenerationRequest,
  TurnGenerationResult,
  TurnModel,
} from '../../ports/model.js';
import { TroupeError } from '../../ports/troupeError.js';
import { type ConcurrencyLimit, createConcurrencyLimit } from './concurrencyLimit.js';
import { runModelCall } from './modelCall.js';
import { modelErrorCodes } from './modelErrors.js';

/** Defaults for model calls: 30 s per call, 2 retries, 4 calls in flight, 3 steps with tools. */
export const modelCallDefaults = {
  timeoutMs: 30_000,
  maxRetries: 2,
  concurrency: 4,
  maxSteps: 3,
} as const;

/** How to build a {@link TurnModel} on an AI SDK language model. */
export interface AiSdkTurnModelOptions {
  /** The AI SDK model, e.g. `createOpenAI({ apiKey }).chat('gpt-4o-mini')`. */
  model: LanguageModel;
  /** `provider:model`, for logs, errors and the start-up banner. */
  id: string;
  /** Time allowed per call, retries included (ms). Default 30 000. */
  timeoutMs?: number;
  /** Retries of retryable failures (429, 5xx, connection errors), by the AI SDK. Default 2. */
  maxRetries?: number;
  /** Calls in flight at once; further calls wait in order. Default 4. Ignored when `limit` is given. */
  concurrency?: number;
  /** A limit shared with other users of the same model (e.g. {@link generateStructured}). */
  limit?: ConcurrencyLimit;
  /** Where usage (info) and failures (warn) are logged. Default: silent. */
  logger?: Logger;
  temperature?: number;
  maxOutputTokens?: number;
  /** Tools the model may call before it answers. */
  tools?: ToolSet;
  /** Most model steps (each tool round trip is one) when tools are given. Default 3. */
  maxSteps?: number;
  /** The environment variable holding the key, named in auth errors. */
  apiKeyVariable?: string;
}

/** Our prompt messages as AI SDK messages (`name` is carried in the text already). */
export function toModelMessages(messages: readonly PromptMessage[]): ModelMessage[] {
  return messages.map((m) => ({ role: m.role, content: m.content }));
}

/** The AI SDK's usage as the port's {@link TokenUsage}, leaving out counts it does not know. */
export function toTokenUsage(usage: LanguageModelUsage): TokenUsage {
  return {
    ...(usage.inputTokens !== undefined ? { inputTokens: usage.inputTokens } : {}),
    ...(usage.outputTokens !== undefined ? { outputTokens: usage.outputTokens } : {}),
    ...(usage.totalTokens !== undefined ? { totalTokens: usage.totalTokens } : {}),
  };
}

/**
 * A {@link TurnModel} on any AI SDK language model (OpenAI, Anthropic, an OpenAI-compatible
 * server). Each turn is one `generateText` call with the request's prompt (system + messages),
 * under a per-call timeout combined with the request's signal, AI SDK retries for retryable
 * failures, and a FIFO concurrency limit. With `tools`, the model may call them for up to
 * `maxSteps` steps and then answer. The reply is returned as written (trimmed;
 * preparation handles a `[voice]` prefix and a leading `Name:` label) and usage is logged.
 * Failures are `TROUPE_MODEL_*` {@link TroupeError}s; a blank reply is `TROUPE_MODEL_EMPTY`.
 */
export function createAiSdkTurnModel(options: AiSdkTurnModelOptions): TurnModel {
  const { model, id } = options;
  const timeoutMs = options.timeoutMs ?? modelCallDefaults.timeoutMs;
  const maxRetries = options.maxRetries ?? modelCallDefaults.maxRetries;
  const limit = options.limit ?? createConcurrencyLimit(options.concurrency ?? modelCallDefaults.concurrency);
  const logger = options.logger ?? silentLogger();
  const maxSteps = options.maxSteps ?? modelCallDefaults.maxSteps;

  return {
    id,
    offline: false,
    generateTurn(request: TurnGenerationRequest): Promise<TurnGenerationResult> {
      return runModelCall(
        {
          modelId: id,
          operation: 'turn',
          timeoutMs,
          signal: request.signal,
          limit,
          logger,
          apiKeyVariable: options.apiKeyVariable,
        },
        async (abortSignal) => {
          const result = await generateText({
            model,
            system: request.prompt.system,
            messages: toModelMessages(request.prompt.messages),
            maxRetries,
            abortSignal,
            ...(options.temperature !== undefined ? { temperature: options.temperature } : {}),
            ...(options.maxOutputTokens !== undefined ? { maxOutputTokens: options.maxOutputTokens } : {}),
            ...(options.tools || request.tools
              ? {
                  tools: { ...options.tools, ...(request.tools as ToolSet | undefined) },
                  stopWhen: stepCountIs(maxSteps),
                }
              : {}),
          });
          const { avatar } = request;
          // The reply goes out as written: preparation reads a `[voice]` prefix and drops a
          // leading label with the avatar's own name, for every model alike.
          const text = result.text.trim();
          if (text === '') {
            const stillCalling =
              result.finishReason === 'tool-calls'
                ? ` It was still calling tools after ${result.steps.length} steps; allow more steps.`
                : '';
            throw new TroupeError(
              modelErrorCodes.empty,
              `Model ${id} returned an empty reply for ${avatar.name}.${stillCalling}`,
              { retryable: true, details: { model: id, finishReason: result.finishReason } },
            );
          }
          const usage = toTokenUsage(result.totalUsage);
          return {
            value: { text, mentions: [], model: id, usage },
            usage,
            steps: result.steps.length,
            finishReason: result.finishReason,
          };
        },
      );
    },
  };
}
