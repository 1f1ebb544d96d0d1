/**
 * The Answer Composer: the tool result envelope and the pure `compose()` that turns it into a reply.
 * @packageDocumentation
 */
export { type ComposeOptions, compose } from './compose.js';
export type {
  ComposedReply,
  ErrorCategory,
  ReplyChoice,
  ReplyParts,
  ReplySeverity,
  ReplyTable,
} from './composedReply.js';
export {
  type ComposerConfig,
  type ComposerConfigOptions,
  type ComposerVariable,
  composerConfigFrom,
  composerFromEnv,
  composerSettings,
  defaultComposerConfig,
  type EnvRecord,
  type EnvSource,
  type ReadComposerConfig,
  readComposerConfig,
  resolveComposerConfig,
} from './composerConfig.js';
export {
  type ComposedStep,
  type CreateStep,
  composeCreateStep,
  confirmPrompt,
  mayCreate,
} from './createSteps.js';
export { choicePrompt } from './disambiguationReply.js';
export {
  type EnvelopeAttempts,
  type EnvelopeCandidate,
  type EnvelopeError,
  type EnvelopeFilter,
  type EnvelopeProblem,
  type EnvelopeQuery,
  type EnvelopeType,
  envelopeAttemptsSchema,
  envelopeCandidateSchema,
  envelopeErrorSchema,
  envelopeFilterSchema,
  envelopeQuerySchema,
  envelopeTypes,
  type ParsedEnvelope,
  parseEnvelope,
  type ToolResultEnvelope,
  toolResultEnvelopeSchema,
} from './envelope.js';
export {
  constraintCodes,
  errorCategoryOf,
  invalidInputCodes,
  permissionCodes,
  schemaCodes,
  temporaryCodes,
} from './errorCategory.js';
export {
  type ComposerCounter,
  type ComposeTelemetry,
  type CreateTelemetry,
  composerCounters,
  composeTelemetrySchema,
  createTelemetrySchema,
} from './telemetry.js';
export { attemptSentences } from './whatITried.js';
