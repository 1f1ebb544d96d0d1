import { generateText, type LanguageModel, Output } from 'ai';
import type { z } from 'zod';
import { type Logger, silentLogger } from '../../logging/logger.js';
import type { Prompt, TokenUsage } from '../../ports/model.js';
import { modelCallDefaults, toModelMessages, toTokenUsage } from './aiSdkModel.js';
import type { ConcurrencyLimit } from './concurrencyLimit.js';
import { runModelCall } from './modelCall.js';

/** What {@link generateStructured} needs. */
export interface GenerateStructuredOptions<Schema extends z.ZodType> {
  /** The AI SDK model (it must support structured output / JSON schema). */
  model: LanguageModel;
  /** The shape of the answer; the parsed, validated object is returned. */
  schema: Schema;
  /** A full prompt, or a single user instruction. */
  prompt: Prompt | string;
  /** `provider:model`, for logs and errors. Default `model`. */
  id?: string;
  /** Name and description of the output, sent to providers that use them. */
  schemaName?: string;
  schemaDescription?: string;
  /** Time allowed, retries included (ms). Default 30 000. */
  timeoutMs?: number;
  /** Retries of retryable failures. Default 2. */
  maxRetries?: number;
  signal?: AbortSignal;
  /** A concurrency limit shared with the turn model, if any. */
  limit?: ConcurrencyLimit;
  logger?: Logger;
  temperature?: number;
  /** Named in auth errors. */
  apiKeyVariable?: string;
  /** Told the call's token usage once it succeeded (the usage ledger counts it). */
  onUsage?: (usage: TokenUsage) => void;
}

/**
 * Asks a model for an object of the given zod `schema` (AI SDK `generateText` with
 * `Output.object`, which sends the JSON schema to the provider) and returns it parsed and
 * validated. Same timeout, retry, limit, logging and error mapping as turns; an answer that does
 * not fit the schema is `TROUPE_MODEL_FAILED` (retryable).
 */
export function generateStructured<Schema extends z.ZodType>(
  options: GenerateStructuredOptions<Schema>,
): Promise<z.output<Schema>> {
  const id = options.id ?? 'model';
  const prompt: Prompt =
    typeof options.prompt === 'string'
      ? { system: '', messages: [{ role: 'user', content: options.prompt }] }
      : options.prompt;
  return runModelCall(
    {
      modelId: id,
      operation: 'structured',
      timeoutMs: options.timeoutMs ?? modelCallDefaults.timeoutMs,
      signal: options.signal,
      limit: options.limit,
      logger: options.logger ?? silentLogger(),
      apiKeyVariable: options.apiKeyVariable,
    },
    async (abortSignal) => {
      const result = await generateText({
        model: options.model,
        ...(prompt.system !== '' ? { system: prompt.system } : {}),
        messages: toModelMessages(prompt.messages),
        output: Output.object({
          schema: options.schema,
          ...(options.schemaName !== undefined ? { name: options.schemaName } : {}),
          ...(options.schemaDescription !== undefined ? { description: options.schemaDescription } : {}),
        }),
        maxRetries: options.maxRetries ?? modelCallDefaults.maxRetries,
        abortSignal,
        ...(options.temperature !== undefined ? { temperature: options.temperature } : {}),
      });
      const usage = toTokenUsage(result.totalUsage);
      options.onUsage?.(usage);
      return {
        value: result.output as z.output<Schema>,
        usage,
        steps: result.steps.length,
        finishReason: result.finishReason,
      };
    },
  );
}
