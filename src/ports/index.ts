/**
 * The ports: every interface the runtime consumes (transport, model, speech, stores, outbox,
 * history, the lookup tool, time, the logger), the contracts they exchange (OutgoingResponse,
 * RoutingOutcome) and the error type with its codes. This layer imports nothing of Troupe's.
 * @packageDocumentation
 */
export type { Clock, TimerHandle } from './clock.js';
export * from './errorCodes.js';
export type {
  ChannelHistoryEntry,
  HistoryEntry,
  HistoryReader,
  HistoryStore,
  HistoryWriter,
} from './history.js';
export type { Logger, LogMethod } from './logger.js';
export type { LookupTool } from './lookupTool.js';
export type {
  ModelPersona,
  Prompt,
  PromptMessage,
  TokenUsage,
  TurnBrief,
  TurnBriefContext,
  TurnGenerationRequest,
  TurnGenerationResult,
  TurnKindBrief,
  TurnModel,
  TurnModelResolver,
  TurnSituation,
  TurnTool,
} from './model.js';
export type { Outbox, OutboxEntry, OutboxSettlement } from './outbox.js';
export {
  type Attachment,
  attachmentSchema,
  type ChannelRef,
  channelRefSchema,
  isSendable,
  type OutgoingResponse,
  outgoingResponseSchema,
  type ResponseOrigin,
  responseOriginSchema,
  type Speaker,
  speakerSchema,
} from './outgoingResponse.js';
export type { RoutingOutcome, SentPart } from './routingOutcome.js';
export type { SpeechRequest, SpeechSynthesizer, SynthesizedSpeech } from './speech.js';
export type {
  DocumentOperation,
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
export {
  type Transport,
  TransportError,
  type TransportLimits,
  type TransportMessage,
  type TransportReceipt,
} from './transport.js';
export { describe, isTroupeError, TroupeError, type TroupeErrorOptions } from './troupeError.js';
