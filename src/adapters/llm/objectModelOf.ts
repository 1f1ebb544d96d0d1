import type { Logger } from '../../logging/logger.js';
import type { ObjectModel } from '../../ports/objectModel.js';
import { type AiSdkObjectModelOptions, createAiSdkObjectModel } from './aiSdkObjectModel.js';
import type { ModelFromEnv } from './modelFromEnv.js';

/**
 * How the environment's model is called for structured output (and by tool-using agents): its
 * provider model, timeout, retries and concurrency limit, shared with the turn model. Undefined
 * offline.
 */
export function modelCallOf(configured: ModelFromEnv, logger: Logger): AiSdkObjectModelOptions | undefined {
  if (!configured.languageModel) return undefined;
  return {
    model: configured.languageModel,
    id: configured.model.id,
    timeoutMs: configured.config.timeoutMs,
    maxRetries: configured.config.maxRetries,
    ...(configured.limit ? { limit: configured.limit } : {}),
    logger,
    ...(configured.config.apiKeyVariable ? { apiKeyVariable: configured.config.apiKeyVariable } : {}),
  };
}

/** The environment's model answering with objects (structured output); undefined offline. */
export function objectModelOf(configured: ModelFromEnv, logger: Logger): ObjectModel | undefined {
  const call = modelCallOf(configured, logger);
  return call ? createAiSdkObjectModel(call) : undefined;
}
