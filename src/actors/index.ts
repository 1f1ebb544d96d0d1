/**
 * The runtime: channel actors in a registry, the preparation/routing pair, the outbox and the
 * ports they use.
 * @packageDocumentation
 */
export { ActorRegistry, type RegisteredActor } from './actorRegistry.js';
export {
  type AvatarDefinition,
  type AvatarDefinitionInput,
  avatarDefinitionSchema,
  avatarListSchema,
} from './avatarDefinition.js';
export { ChannelActor, type ChannelStart, isUserRequest } from './channelActor.js';
export { type ChannelDocument, ChannelPersistence } from './channelPersistence.js';
export { type Clock, SimulatedClock, systemClock, type TimerHandle } from './clock.js';
export { ensureFeedback, FALLBACK_TEXT, type FeedbackDecision } from './feedbackGuarantee.js';
export type { HistoryEntry, HistoryReader, HistoryStore, HistoryWriter } from './historyStore.js';
export type { InspectionEvent } from './inspectionEvent.js';
export type { Outbox, OutboxEntry, OutboxSettlement } from './outbox.js';
export {
  type Attachment,
  type ChannelRef,
  isSendable,
  type OutgoingResponse,
  outgoingResponseSchema,
  type ResponseOrigin,
  type Speaker,
} from './outgoingResponse.js';
export {
  type PreparationInput,
  type PreparationRequest,
  prepareOutgoingResponse,
  speakableText,
  userFacingErrorText,
  type VoicePolicy,
} from './preparation.js';
export { type Relationship, RelationshipTracker, relationshipNote } from './relationshipTracker.js';
export {
  defaultRetryPolicy,
  type RetryPolicy,
  RoutingActor,
  type RoutingActorOptions,
} from './routingActor.js';
export type { RoutingOutcome, SentPart } from './routingOutcome.js';
export {
  channelKey,
  createRuntime,
  inspectionOf,
  type PersistenceOptions,
  type Runtime,
  type RuntimeOptions,
  type RuntimeStore,
  type SendResult,
} from './runtime.js';
export {
  type ChannelMessageEvent,
  type RuntimeEvent,
  type RuntimeEventInput,
  runtimeEventSchema,
} from './runtimeEvents.js';
export type {
  DocumentStore,
  DocumentWrite,
  EventLog,
  LoggedEvent,
  MemoryRecord,
  ProcessedIds,
  StoredDocument,
  TroupeStore,
  VersionedMemory,
} from './store.js';
export { AGENT_EVENT_LOGS, LookupDesk, type LookupDeskOptions, type LookupTool } from './tools/lookupDesk.js';
export { type LookupIntent, lookupIntent } from './tools/lookupIntent.js';
export { TurnExecutor } from './turnExecutor.js';
