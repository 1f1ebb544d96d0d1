/**
 * Troupe: an actor-model runtime for in-process conversational agents.
 *
 * The root export is what an embedder needs to run a runtime: `createRuntime` with its options,
 * events and result types, the avatar definition, the in-memory defaults (store, scripted model),
 * the coordination configuration, the errors, and the types of the ports most embedders implement
 * (transport, model, store, speech, clock, logger). Everything else loads through a subpath:
 * `troupe/ports` (every port contract and the error-code registry), `troupe/composer` (tool result
 * envelopes into replies), `troupe/ai-sdk` (AI SDK models), `troupe/voice` (speech),
 * `troupe/sqlite` (the SQLite store and `openDefaultStore`), `troupe/mongodb`, `troupe/sql` (the
 * entity lookup), `troupe/demo-erp`, `troupe/email`, `troupe/gmail`, `troupe/discord`,
 * `troupe/simulator`, `troupe/machines` (the coordination core and its diagrams), `troupe/studio`
 * and `troupe/testing`.
 * @packageDocumentation
 */
export type { AvatarChange } from './actors/avatarCast.js';
export type { AvatarCreationOptions, CreateAvatarRequest, CreatedAvatar } from './actors/avatarCreator.js';
export type { AvatarDefinition, AvatarDefinitionInput } from './actors/avatarDefinition.js';
export { systemClock } from './actors/clock.js';
export type { InspectionEvent } from './actors/inspectionEvent.js';
export type { RetryPolicy } from './actors/routingActor.js';
export type { ChannelMessageEvent, RuntimeEvent, RuntimeEventInput } from './actors/runtimeEvents.js';
export type {
  PersistenceOptions,
  Runtime,
  RuntimeOptions,
  SendOptions,
  SendResult,
} from './actors/runtimeOptions.js';
export { createScriptedModel } from './adapters/llm/scriptedModel.js';
export { createMemoryStore } from './adapters/store/memory/memoryStore.js';
export { ConfigError } from './config/configError.js';
export type { CoordinationConfig, CoordinationConfigInput } from './config/coordinationConfig.js';
export { coordinationFromEnv } from './config/coordinationFromEnv.js';
export { createRuntime } from './createRuntime.js';
export { createLogger, type Logger, silentLogger } from './logging/logger.js';
export type { Clock } from './ports/clock.js';
export type { TroupeErrorCode } from './ports/errorCodes.js';
export type { TurnGenerationRequest, TurnGenerationResult, TurnModel } from './ports/model.js';
export type { ChannelRef, OutgoingResponse, Speaker } from './ports/outgoingResponse.js';
export type { RoutingOutcome } from './ports/routingOutcome.js';
export type { SpeechSynthesizer } from './ports/speech.js';
export type { TroupeStore } from './ports/store.js';
export {
  type Transport,
  TransportError,
  type TransportLimits,
  type TransportMessage,
  type TransportReceipt,
} from './ports/transport.js';
export { isTroupeError, TroupeError } from './ports/troupeError.js';
