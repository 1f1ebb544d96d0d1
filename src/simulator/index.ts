/**
 * `troupe/simulator`: scenario files (YAML/JSON) played against the coordination core on a
 * simulated clock, with transcripts and summaries.
 * @packageDocumentation
 */

export {
  type ScriptedReply,
  type ScriptedReplyInput,
  scriptedReply,
} from '../adapters/llm/scriptedReplies.js';
export {
  DURATION_HINT,
  durationSchema,
  formatDuration,
  formatSimTime,
  parseDurationMs,
} from '../config/duration.js';
export { type FormatOptions, formatSummary, formatTranscript } from './formatTranscript.js';
export {
  type AvatarMessageEntry,
  DEFAULT_START_AT,
  type FloorLike,
  type HumanMessageEntry,
  type RunScenarioOptions,
  runScenario,
  type SimulatedAvatarModel,
  type SimulationResult,
  type TranscriptEntry,
} from './runScenario.js';
export {
  loadScenarioFile,
  parseScenario,
  parseScenarioText,
  type Scenario,
  ScenarioError,
  type ScenarioErrorCode,
  type ScenarioInput,
  type ScenarioProblem,
  type ScriptStep,
  scenarioConfigOverrides,
  scenarioSchema,
} from './scenario.js';
export { renderScenarioJsonSchema, SCENARIO_SCHEMA_PATH, scenarioJsonSchema } from './scenarioJsonSchema.js';
export type { PromptSummary, SimulationSummary, ThreadSummary } from './summary.js';
