/**
 * `troupe/ai-sdk`: turn models on the AI SDK (OpenAI, Anthropic, any OpenAI-compatible server),
 * chosen from the environment or built directly, an `ObjectModel` for structured output (what the
 * email assistant asks), structured output, and the model call's error
 * mapping and concurrency limit. The offline scripted model is also on the root export.
 * @packageDocumentation
 */

export { type AiSdkAgentModelOptions, createAiSdkAgentModel } from './aiSdkAgentModel.js';
export {
  type AiSdkTurnModelOptions,
  createAiSdkTurnModel,
  modelCallDefaults,
  toModelMessages,
  toTokenUsage,
} from './aiSdkModel.js';
export { type AiSdkObjectModelOptions, createAiSdkObjectModel } from './aiSdkObjectModel.js';
export { type ConcurrencyLimit, createConcurrencyLimit } from './concurrencyLimit.js';
export { type ModelCallOptions, type ModelCallOutcome, runModelCall } from './modelCall.js';
export { type ModelErrorCode, type ModelErrorContext, modelErrorCodes, toModelError } from './modelErrors.js';
export { type ModelConfig, type ModelFromEnv, modelFromEnv } from './modelFromEnv.js';
export { type ModelProfile, modelProfileSchema } from './modelProfiles.js';
export { createModelResolver, type DefaultModelRef, type ModelResolverOptions } from './modelResolver.js';
export { defaultModelIds, type ModelProvider, type ModelVariable, modelSettings } from './modelSettings.js';
export { createScriptedModel, SCRIPTED_MODEL_ID } from './scriptedModel.js';
export { type GenerateStructuredOptions, generateStructured } from './structuredOutput.js';
