/**
 * The language-model layer: the turn model port, the AI SDK adapter (OpenAI, Anthropic, any
 * OpenAI-compatible server), the offline scripted model, prompt building and configuration.
 */
export {
  type AiSdkTurnModelOptions,
  createAiSdkTurnModel,
  modelCallDefaults,
  toModelMessages,
  toTokenUsage,
} from './aiSdkModel.js';
export type { ChannelHistoryEntry } from './channelHistory.js';
export { type ConcurrencyLimit, createConcurrencyLimit } from './concurrencyLimit.js';
export { DEFAULT_HISTORY_CHARS, DEFAULT_HISTORY_LIMIT, historyMessages } from './historyMessages.js';
export type {
  Prompt,
  PromptMessage,
  TokenUsage,
  TurnGenerationRequest,
  TurnGenerationResult,
  TurnModel,
  TurnSituation,
} from './languageModelPort.js';
export { type ModelCallOptions, type ModelCallOutcome, runModelCall } from './modelCall.js';
export { type ModelErrorCode, type ModelErrorContext, modelErrorCodes, toModelError } from './modelErrors.js';
export { type ModelConfig, type ModelFromEnv, modelFromEnv } from './modelFromEnv.js';
export { defaultModelIds, type ModelProvider, type ModelVariable, modelSettings } from './modelSettings.js';
export {
  buildTurnPrompt,
  personaInstructions,
  presenceNote,
  type TurnPromptInput,
  threadNote,
  VOICE_NOTE,
} from './prompts.js';
export { cleanReplyText } from './replyText.js';
export { createScriptedModel, SCRIPTED_MODEL_ID } from './scriptedModel.js';
export { type GenerateStructuredOptions, generateStructured } from './structuredOutput.js';
export { splitVoicePrefix, type VoiceSplit } from './voicePrefix.js';
