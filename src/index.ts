/**
 * Troupe: an actor-model runtime for in-process conversational agents.
 * @packageDocumentation
 */
export { ConfigError, type ConfigProblem } from './config/configError.js';
export {
  type CoordinationConfig,
  type CoordinationVariable,
  coordinationSettings,
  defaultCoordinationConfig,
} from './config/coordinationConfig.js';
export { loadCoordinationConfig } from './config/loadCoordinationConfig.js';
export { type DiagramFormat, statechartDiagram } from './inspect/statechartDiagram.js';
export * from './machines/index.js';
export {
  formatTranscript,
  loadScenarioFile,
  parseScenario,
  parseScenarioText,
  runScenario,
  type Scenario,
  ScenarioError,
  type SimulationResult,
  type SimulationSummary,
  type TranscriptEntry,
} from './simulator/index.js';
