import type { LanguageModel } from 'ai';
import type { z } from 'zod';
import type { Logger } from '../../logging/logger.js';
import type { ObjectModel, ObjectRequest } from '../../ports/objectModel.js';
import type { ConcurrencyLimit } from './concurrencyLimit.js';
import { generateStructured } from './structuredOutput.js';

/** How {@link createAiSdkObjectModel} reaches its model. */
export interface AiSdkObjectModelOptions {
  model: LanguageModel;
  /** `provider:model`. */
  id: string;
  timeoutMs?: number;
  maxRetries?: number;
  /** Shared with the turn model of the same provider, so both keep to one concurrency. */
  limit?: ConcurrencyLimit;
  logger?: Logger;
  apiKeyVariable?: string;
}

/** An {@link ObjectModel} over an AI SDK model (structured output with the schema sent along). */
export function createAiSdkObjectModel(options: AiSdkObjectModelOptions): ObjectModel {
  return {
    id: options.id,
    generateObject<Schema extends z.ZodType>(request: ObjectRequest<Schema>) {
      return generateStructured({
        model: options.model,
        schema: request.schema,
        prompt: request.prompt,
        id: options.id,
        schemaName: request.schemaName,
        ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
        ...(options.maxRetries !== undefined ? { maxRetries: options.maxRetries } : {}),
        ...(request.signal ? { signal: request.signal } : {}),
        ...(request.onUsage ? { onUsage: request.onUsage } : {}),
        ...(options.limit ? { limit: options.limit } : {}),
        ...(options.logger ? { logger: options.logger } : {}),
        ...(options.apiKeyVariable ? { apiKeyVariable: options.apiKeyVariable } : {}),
        temperature: 0,
      });
    },
  };
}
