/**
 * Troupe: an actor-model runtime for in-process conversational agents.
 *
 * The root export is what an embedder needs: `createRuntime` with its options and streams, the
 * ports to implement (transport, model, speech, stores), the errors and their codes, the answer
 * composer, delivery policy and configuration. Heavy or optional parts load only through their
 * subpaths: `troupe/ai-sdk` (AI SDK models), `troupe/voice` (speech), `troupe/sqlite` (the SQLite
 * store and `openDefaultStore`), `troupe/mongodb`, `troupe/sql` (the entity lookup),
 * `troupe/demo-erp`, `troupe/simulator`, `troupe/machines` (the coordination core and its
 * diagrams) and `troupe/testing`.
 * @packageDocumentation
 */
export {
  type AvatarDefinition,
  type AvatarDefinitionInput,
  avatarDefinitionSchema,
  avatarListSchema,
} from './actors/avatarDefinition.js';
export { systemClock } from './actors/clock.js';
export type { InspectionEvent } from './actors/inspectionEvent.js';
export { defaultRetryPolicy, type RetryPolicy } from './actors/routingActor.js';
export { channelKey, inspectionOf } from './actors/runtime.js';
export {
  type ChannelMessageEvent,
  type RuntimeEvent,
  type RuntimeEventInput,
  runtimeEventSchema,
} from './actors/runtimeEvents.js';
export type {
  PersistenceOptions,
  Runtime,
  RuntimeOptions,
  RuntimeStore,
  SendResult,
} from './actors/runtimeOptions.js';
export type { PendingWork, WorkTask, WorkWait } from './actors/workTracker.js';
export { createScriptedModel, SCRIPTED_MODEL_ID } from './adapters/llm/scriptedModel.js';
export { createMemoryStore, type MemoryStoreOptions } from './adapters/store/memory/memoryStore.js';
export * from './composer/index.js';
export { ConfigError, type ConfigProblem } from './config/configError.js';
export {
  type CoordinationConfig,
  type CoordinationConfigInput,
  type CoordinationVariable,
  coordinationSettings,
  defaultCoordinationConfig,
} from './config/coordinationConfig.js';
export { DURATION_HINT, formatDuration, parseDurationMs } from './config/duration.js';
export { loadCoordinationConfig, resolveCoordinationConfig } from './config/loadCoordinationConfig.js';
export { createRuntime } from './createRuntime.js';
export * from './delivery/index.js';
export { createLogger, type Logger, silentLogger } from './logging/logger.js';
export type { FloorView } from './machines/channelFloor.js';
export { FloorSnapshotError } from './machines/floorSnapshot.js';
export * from './ports/index.js';
